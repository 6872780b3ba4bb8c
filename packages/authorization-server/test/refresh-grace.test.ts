/**
 * Refresh under concurrency (src/tokens/refresh-grace.ts): rotated refresh tokens with reuse detection
 * (RFC 9700 §4.14.2, OAuth 2.1 §4.3.1) plus a grace window in which the same client repeating
 * the same refresh gets the same new pair. Everything through real HTTP on loopback.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import { ConfigError } from '../src/index.js';
import { validateConfig } from '../src/ops/index.js';
import { REFRESH_GRACE_NAMESPACE } from '../src/tokens/refresh-grace.js';
import { openGraceRecord } from '../src/tokens/refresh-grace/sealed-response.js';
import { CONFIDENTIAL_WEB_CLIENT, RESOURCE, registerClient, startAs, tokenRequest, type RunningAs, type TestConfig } from './helpers/as.js';
import { authorizeAuto, exchangeCode, codeGrant } from './helpers/flow.js';
import { dpopKey, proof, type Key } from './helpers/dpop.js';
import { recordingLogger } from './helpers/recording-logger.js';
import { openForDescribe, startAsWithClientForDescribe } from './helpers/for-describe.js';

type Tokens = Record<string, any>;

async function initialTokens(t: RunningAs, clientId: string): Promise<Tokens> {
  const flow = await authorizeAuto(t.url, clientId);
  const res = await exchangeCode(t.url, clientId, flow);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.refresh_token).toBeTypeOf('string');
  return res.body;
}

function refresh(
  t: RunningAs,
  clientId: string,
  refreshToken: string,
  extra: Record<string, string> = {},
  headers: Record<string, string> = {},
) {
  return tokenRequest(
    t.url,
    { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, resource: RESOURCE, ...extra },
    headers,
  );
}

const slotOf = (token: string) => createHash('sha256').update(token).digest('base64url');

async function start(overrides: TestConfig = {}): Promise<RunningAs> {
  return startAs({ devAutoLogin: 'alice', ...overrides });
}

/** The first tokens of a code flow and their first refresh, which must succeed. */
async function refreshedOnce(t: RunningAs, clientId: string) {
  const tokens = await initialTokens(t, clientId);
  const first = await refresh(t, clientId, tokens.refresh_token);
  expect(first.status).toBe(200);
  return { tokens, first };
}

/** For the enclosing describe: an AS started with `overrides`, and one registered public client, handed to `use`. */
function startForDescribe(overrides: TestConfig, use: (t: RunningAs, clientId: string) => void) {
  startAsWithClientForDescribe({ devAutoLogin: 'alice', ...overrides }, use);
}

describe('refresh grace window (default 10 s, memory store)', () => {
  let t: RunningAs;
  let clientId: string;
  startForDescribe({}, (...started) => ([t, clientId] = started));

  it('RFC 9700 §4.14.2 grace policy: two concurrent refreshes of one token both get the identical new pair; the grant survives', async () => {
    const tokens = await initialTokens(t, clientId);
    const [a, b] = await Promise.all([refresh(t, clientId, tokens.refresh_token), refresh(t, clientId, tokens.refresh_token)]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    expect(a.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(b.body.refresh_token).toBe(a.body.refresh_token);
    expect(b.body.access_token).toBe(a.body.access_token);
    expect(a.headers.get('cache-control')).toBe('no-store');
    expect(b.headers.get('cache-control')).toBe('no-store');
    // The new refresh token works afterwards: nothing was revoked.
    const next = await refresh(t, clientId, a.body.refresh_token);
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.refresh_token).not.toBe(a.body.refresh_token);
  });

  it('RFC 9700 §4.14.2 grace policy: five concurrent refreshes → one pair for all', async () => {
    const tokens = await initialTokens(t, clientId);
    const results = await Promise.all(Array.from({ length: 5 }, () => refresh(t, clientId, tokens.refresh_token)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.body.refresh_token)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.access_token)).size).toBe(1);
    expect((await refresh(t, clientId, results[0]!.body.refresh_token)).status).toBe(200);
  });

  it('a sequential retry within the window (the first response was lost) gets the same pair with Cache-Control: no-store', async () => {
    const { tokens, first } = await refreshedOnce(t, clientId);
    const retry = await refresh(t, clientId, tokens.refresh_token);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.access_token).toBe(first.body.access_token);
    expect(retry.body.refresh_token).toBe(first.body.refresh_token);
    expect(retry.body.token_type).toBe(first.body.token_type);
    expect(retry.body.scope).toBe(first.body.scope);
    expect(retry.body.expires_in).toBeLessThanOrEqual(first.body.expires_in);
    expect(retry.headers.get('cache-control')).toBe('no-store');
    expect((await refresh(t, clientId, first.body.refresh_token)).status).toBe(200);
  });

  it('RFC 9700 §4.14.2: another client presenting the rotated token within the window is not served, and the grant is revoked', async () => {
    const { tokens, first } = await refreshedOnce(t, clientId);
    const other = (await registerClient(t.url)).body.client_id as string;
    const stolen = await refresh(t, other, tokens.refresh_token);
    expectOAuthError(stolen, 'invalid_grant', 400);
    expect(stolen.body.access_token).toBeUndefined();
    expect(stolen.body.refresh_token).toBeUndefined();
    // The leak ends the grant: the legitimate client's newest refresh token is dead too.
    const legit = await refresh(t, clientId, first.body.refresh_token);
    expectOAuthError(legit, 'invalid_grant', 400);
  });

  it('another client presenting a live (unused) refresh token gets invalid_grant and the owner keeps working', async () => {
    const tokens = await initialTokens(t, clientId);
    const other = (await registerClient(t.url)).body.client_id as string;
    const stolen = await refresh(t, other, tokens.refresh_token);
    expectOAuthError(stolen, 'invalid_grant', 400);
    expect((await refresh(t, clientId, tokens.refresh_token)).status).toBe(200);
  });

  it('RFC 9700 §4.14.2: a repeat with different parameters (scope) is reuse, not a retry → invalid_grant, grant revoked', async () => {
    const { tokens, first } = await refreshedOnce(t, clientId);
    const other = await refresh(t, clientId, tokens.refresh_token, { scope: 'notes:read' });
    expectOAuthError(other, 'invalid_grant', 400);
    expect(other.body.access_token).toBeUndefined();
    expect((await refresh(t, clientId, first.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('RFC 9700 §4.14.2: once the new refresh token was used, the old one is not served again → invalid_grant, grant revoked', async () => {
    const tokens = await initialTokens(t, clientId);
    const first = await refresh(t, clientId, tokens.refresh_token);
    const second = await refresh(t, clientId, first.body.refresh_token);
    expect(second.status).toBe(200);
    const stale = await refresh(t, clientId, tokens.refresh_token);
    expectOAuthError(stale, 'invalid_grant', 400);
    expect((await refresh(t, clientId, second.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('RFC 7009: a grant revoked after the first refresh is not resurrected by a retry in the window', async () => {
    const tokens = await initialTokens(t, clientId);
    const first = await refresh(t, clientId, tokens.refresh_token);
    const revoke = await fetch(`${t.url}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: first.body.refresh_token, token_type_hint: 'refresh_token', client_id: clientId }),
    });
    expect(revoke.status).toBe(200);
    const retry = await refresh(t, clientId, tokens.refresh_token);
    expectOAuthError(retry, 'invalid_grant', 400);
    expect(retry.body.access_token).toBeUndefined();
  });

  it('RFC 8707 §2.2: a refresh naming a resource the grant does not cover → invalid_target, and the refresh token is not burnt', async () => {
    const tokens = await initialTokens(t, clientId);
    const wrong = await refresh(t, clientId, tokens.refresh_token, { resource: 'https://unknown.example/mcp' });
    expectOAuthError(wrong, 'invalid_target', 400);
    const typo = await refresh(t, clientId, tokens.refresh_token, { resource: `${RESOURCE}/` });
    expect(typo.body.error).toBe('invalid_target');
    const ok = await refresh(t, clientId, tokens.refresh_token);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await refresh(t, clientId, ok.body.refresh_token)).status).toBe(200);
  });

  it('the store holds no token: the key is SHA-256 of the refresh token, the value is sealed (AES-256-GCM, key from the token)', async () => {
    const { tokens, first } = await refreshedOnce(t, clientId);
    const slot = slotOf(tokens.refresh_token);
    expect(await t.as.store.kv.get(REFRESH_GRACE_NAMESPACE, tokens.refresh_token)).toBeUndefined();
    expect(await t.as.store.kv.get(REFRESH_GRACE_NAMESPACE, `r:${tokens.refresh_token}`)).toBeUndefined();
    const record = await t.as.store.kv.get(REFRESH_GRACE_NAMESPACE, `r:${slot}`);
    expect(record).toMatchObject({ v: 1, salt: expect.any(String), iv: expect.any(String), ct: expect.any(String) });
    const raw = JSON.stringify(record);
    for (const secret of [tokens.refresh_token, first.body.refresh_token, first.body.access_token])
      expect(raw.includes(secret)).toBe(false);
    expect(raw.includes(clientId)).toBe(false);
    // Only a holder of the old refresh token can open it.
    expect(openGraceRecord(tokens.refresh_token, slot, record)?.body.refresh_token).toBe(first.body.refresh_token);
    expect(openGraceRecord(first.body.refresh_token, slot, record)).toBeUndefined();
  });
});

describe('refresh grace log lines', () => {
  const { logger, lines } = recordingLogger({ debug: true });
  let t: RunningAs;
  let clientId: string;
  startForDescribe({ logger }, (...started) => ([t, clientId] = started));

  it('DESIGN §Rules: served, skipped and cross-client reuse are logged with the client and never a token', async () => {
    const tokens = await initialTokens(t, clientId);
    const [a] = await Promise.all([refresh(t, clientId, tokens.refresh_token), refresh(t, clientId, tokens.refresh_token)]);
    await refresh(t, clientId, tokens.refresh_token, { scope: 'notes:read' });
    const leaked = await initialTokens(t, clientId);
    const rotated = await refresh(t, clientId, leaked.refresh_token);
    const other = (await registerClient(t.url)).body.client_id as string;
    expect((await refresh(t, other, leaked.refresh_token)).body.error).toBe('invalid_grant');
    const events = lines.map((l) => l.fields?.event).filter(Boolean);
    expect(events).toContain('refresh_grace.served');
    expect(events).toContain('refresh_grace.skipped');
    expect(events).toContain('refresh_grace.cross_client_reuse');
    expect(lines.find((l) => l.fields?.event === 'refresh_grace.served')?.fields?.client_id).toBe(clientId);
    expect(lines.find((l) => l.fields?.event === 'refresh_grace.skipped')?.fields?.reason).toBe('different_request');
    const all = JSON.stringify(lines);
    const secrets = [tokens.refresh_token, tokens.access_token, a.body.refresh_token, a.body.access_token, slotOf(tokens.refresh_token)];
    for (const secret of [...secrets, leaked.refresh_token, rotated.body.refresh_token, rotated.body.access_token]) {
      expect(all.includes(secret)).toBe(false);
    }
  });
});

describe('a served repeat is a refresh, not a refusal', () => {
  const { logger, lines } = recordingLogger({ debug: true });
  let t: RunningAs;
  let clientId: string;
  startForDescribe({ logger }, (...started) => ([t, clientId] = started));

  it('DESIGN §Rules: the retry is audited as refreshed and served, and no refusal or error line is written', async () => {
    const tokens = await initialTokens(t, clientId);
    lines.length = 0; // from here on: the two refreshes only
    const first = await refresh(t, clientId, tokens.refresh_token);
    const retry = await refresh(t, clientId, tokens.refresh_token);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.refresh_token).toBe(first.body.refresh_token);
    const messages = lines.map((l) => l.message);
    expect(messages.filter((m) => m === 'audit token.refreshed')).toHaveLength(2);
    expect(messages.filter((m) => m === 'audit refresh_grace.served')).toHaveLength(1);
    expect(lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  });
});

describe('confidential clients: a repeat must authenticate like the first request', () => {
  let t: RunningAs;
  openForDescribe(start, (started) => (t = started));

  it('RFC 6749 §6: a retry with a wrong client secret → invalid_client and nothing served; with the right one → the same pair', async () => {
    const reg = await registerClient(t.url, CONFIDENTIAL_WEB_CLIENT);
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const { client_id: id, client_secret: secret } = reg.body as { client_id: string; client_secret: string };
    const basic = (s: string) => ({
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(s)}`).toString('base64')}`,
    });
    const flow = await authorizeAuto(t.url, id);
    const code = await tokenRequest(t.url, codeGrant(id, flow, { client_id: undefined }), basic(secret));
    expect(code.status, JSON.stringify(code.body)).toBe(200);
    const params = { grant_type: 'refresh_token', refresh_token: code.body.refresh_token as string, resource: RESOURCE };
    const first = await tokenRequest(t.url, params, basic(secret));
    expect(first.status).toBe(200);
    const forged = await tokenRequest(t.url, params, basic('not-the-secret'));
    expectOAuthError(forged, 'invalid_client', 401);
    expect(forged.body.access_token).toBeUndefined();
    const retry = await tokenRequest(t.url, params, basic(secret));
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.refresh_token).toBe(first.body.refresh_token);
    expect(retry.body.access_token).toBe(first.body.access_token);
  });
});

describe('DPoP-bound refresh tokens (RFC 9449) with required nonces', () => {
  let t: RunningAs;
  let clientId: string;
  let key: Key;
  startForDescribe({ dpop: { requireNonce: true } }, (...started) => ([t, clientId] = started));
  beforeAll(async () => {
    key = await dpopKey();
  });

  const htu = () => `${t.url}/token`;

  /** A DPoP-bound token set; with requireNonce the first proof only teaches the nonce. */
  async function boundTokens(): Promise<{ tokens: Tokens; nonce: string }> {
    const flow = await authorizeAuto(t.url, clientId, { dpop_jkt: key.jkt });
    const params = codeGrant(clientId, flow);
    const teach = await tokenRequest(t.url, params, { dpop: await proof(key, htu()) });
    expect(teach.body.error).toBe('use_dpop_nonce');
    const nonce = teach.headers.get('dpop-nonce')!;
    const res = await tokenRequest(t.url, params, { dpop: await proof(key, htu(), nonce) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    return { tokens: res.body, nonce };
  }

  it('RFC 9449 §8 + grace: a use_dpop_nonce failure does not spoil the window; concurrent retries by the same key get one pair', async () => {
    const { tokens, nonce } = await boundTokens();
    const noNonce = await refresh(t, clientId, tokens.refresh_token, {}, { dpop: await proof(key, htu()) });
    expect(noNonce.body.error).toBe('use_dpop_nonce');
    const [a, b] = await Promise.all([
      proof(key, htu(), nonce).then((p) => refresh(t, clientId, tokens.refresh_token, {}, { dpop: p })),
      proof(key, htu(), nonce).then((p) => refresh(t, clientId, tokens.refresh_token, {}, { dpop: p })),
    ]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    expect(b.body.access_token).toBe(a.body.access_token);
    expect(b.body.refresh_token).toBe(a.body.refresh_token);
    const next = await refresh(t, clientId, a.body.refresh_token, {}, { dpop: await proof(key, htu(), nonce) });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
  });

  it('RFC 9449 §8 + grace: a failing request racing two good ones gets its own error; the good ones share one pair', async () => {
    for (let round = 0; round < 3; round++) {
      const { tokens, nonce } = await boundTokens();
      const send = (p: Promise<string>) => p.then((dpop) => refresh(t, clientId, tokens.refresh_token, {}, { dpop }));
      const [bad, one, two] = await Promise.all([send(proof(key, htu())), send(proof(key, htu(), nonce)), send(proof(key, htu(), nonce))]);
      expect(bad.body.error).toBe('use_dpop_nonce');
      expect(one.status, JSON.stringify(one.body)).toBe(200);
      expect(two.status, JSON.stringify(two.body)).toBe(200);
      expect(two.body.refresh_token).toBe(one.body.refresh_token);
      expect(two.body.access_token).toBe(one.body.access_token);
      expect((await refresh(t, clientId, one.body.refresh_token, {}, { dpop: await proof(key, htu(), nonce) })).status).toBe(200);
    }
  });

  it('RFC 9449 §5: within the window, no proof or a proof by another key is refused and nothing is served', async () => {
    const { tokens, nonce } = await boundTokens();
    const first = await refresh(t, clientId, tokens.refresh_token, {}, { dpop: await proof(key, htu(), nonce) });
    expect(first.status).toBe(200);
    const noProof = await refresh(t, clientId, tokens.refresh_token);
    expect(noProof.status).toBe(400);
    expect(noProof.body.access_token).toBeUndefined();
    const thief = await dpopKey();
    const otherKey = await refresh(t, clientId, tokens.refresh_token, {}, { dpop: await proof(thief, htu(), nonce) });
    expectOAuthError(otherKey, 'invalid_grant', 400);
    expect(otherKey.body.access_token).toBeUndefined();
    // A bound token is useless without its key, so (as in oidc-provider) this does not end the grant.
    const again = await refresh(t, clientId, tokens.refresh_token, {}, { dpop: await proof(key, htu(), nonce) });
    expect(again.body.refresh_token).toBe(first.body.refresh_token);
  });

  it('RFC 9700 §4.14.2: once the new DPoP-bound refresh token was used, a repeat of the old one with a fresh proof revokes the grant', async () => {
    const { tokens, nonce } = await boundTokens();
    const first = await refresh(t, clientId, tokens.refresh_token, {}, { dpop: await proof(key, htu(), nonce) });
    const second = await refresh(t, clientId, first.body.refresh_token, {}, { dpop: await proof(key, htu(), nonce) });
    expect(second.status).toBe(200);
    const stale = await refresh(t, clientId, tokens.refresh_token, {}, { dpop: await proof(key, htu(), nonce) });
    expectOAuthError(stale, 'invalid_grant', 400);
    const newest = await refresh(t, clientId, second.body.refresh_token, {}, { dpop: await proof(key, htu(), nonce) });
    expect(newest.body.error).toBe('invalid_grant');
  });

  it("RFC 9449 §11.1: the retry's proof cannot be a replay of the first one", async () => {
    const { tokens, nonce } = await boundTokens();
    const p = await proof(key, htu(), nonce);
    const first = await refresh(t, clientId, tokens.refresh_token, {}, { dpop: p });
    expect(first.status).toBe(200);
    const replayed = await refresh(t, clientId, tokens.refresh_token, {}, { dpop: p });
    expect(replayed.status).toBe(400);
    expect(replayed.body.access_token).toBeUndefined();
  });
});

// better-sqlite3 is a native module built for one Node ABI (npm test runs on that Node; another
// Node, e.g. one first on PATH for `npx`, cannot load it).
async function sqliteDriverLoads(): Promise<boolean> {
  try {
    const { default: Database } = await import('better-sqlite3');
    new Database(':memory:').close();
    return true;
  } catch {
    return false;
  }
}
const sqliteLoads = await sqliteDriverLoads();

describe.skipIf(!sqliteLoads)('refresh grace on the embedded SQLite store', () => {
  let t: RunningAs;
  let clientId: string;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'refresh-grace-'));
    t = await start({ storage: { kind: 'sqlite', file: join(dir, 'as.db') } });
    clientId = (await registerClient(t.url)).body.client_id;
  });
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('RFC 9700 §4.14.2 grace policy: concurrent refreshes and a later retry get one pair; a replay with another scope revokes', async () => {
    const tokens = await initialTokens(t, clientId);
    const [a, b] = await Promise.all([refresh(t, clientId, tokens.refresh_token), refresh(t, clientId, tokens.refresh_token)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.refresh_token).toBe(a.body.refresh_token);
    expect(b.body.access_token).toBe(a.body.access_token);
    const retry = await refresh(t, clientId, tokens.refresh_token);
    expect(retry.body.refresh_token).toBe(a.body.refresh_token);
    const other = await refresh(t, clientId, tokens.refresh_token, { scope: 'notes:read' });
    expect(other.body.error).toBe('invalid_grant');
    expect((await refresh(t, clientId, a.body.refresh_token)).body.error).toBe('invalid_grant');
  });
});

describe('replay after the window (reuseGraceSeconds: 1)', () => {
  let t: RunningAs;
  let clientId: string;
  startForDescribe({ refreshTokens: { reuseGraceSeconds: 1 } }, (...started) => ([t, clientId] = started));

  it('RFC 9700 §4.14.2 / OAuth 2.1 §4.3.1: a replay after the window → invalid_grant and the newest refresh token is revoked too', async () => {
    const { tokens, first } = await refreshedOnce(t, clientId);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const replay = await refresh(t, clientId, tokens.refresh_token);
    expectOAuthError(replay, 'invalid_grant', 400);
    expect(replay.body.access_token).toBeUndefined();
    const legit = await refresh(t, clientId, first.body.refresh_token);
    expectOAuthError(legit, 'invalid_grant', 400);
  });
});

describe('reuseGraceSeconds: 0 (off)', () => {
  let t: RunningAs;
  let clientId: string;
  startForDescribe({ refreshTokens: { reuseGraceSeconds: 0 } }, (...started) => ([t, clientId] = started));

  it('OAuth 2.1 §4.3.1: plain reuse detection — an immediate retry → invalid_grant and the grant is revoked; nothing is stored', async () => {
    const { tokens, first } = await refreshedOnce(t, clientId);
    const retry = await refresh(t, clientId, tokens.refresh_token);
    expectOAuthError(retry, 'invalid_grant', 400);
    expect((await refresh(t, clientId, first.body.refresh_token)).body.error).toBe('invalid_grant');
    expect(await t.as.store.kv.get(REFRESH_GRACE_NAMESPACE, `c:${slotOf(tokens.refresh_token)}`)).toBeUndefined();
  });
});

describe('configuration', () => {
  const base = {
    issuer: 'http://127.0.0.1:9000',
    resources: [{ resource: RESOURCE, scopes: { 'notes:read': 'Read' } }],
    storage: { kind: 'memory' as const },
  };
  const problemsOf = (value: unknown) => {
    try {
      validateConfig({ ...base, refreshTokens: { reuseGraceSeconds: value as number } });
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
  };

  it('refreshTokens.reuseGraceSeconds accepts integers 0..60 and refuses anything else with the field name', () => {
    for (const ok of [undefined, 0, 1, 10, 60]) expect(problemsOf(ok), String(ok)).toEqual([]);
    for (const bad of [-1, 1.5, 61, '10', Number.NaN, null]) {
      const problems = problemsOf(bad);
      expect(
        problems.some((p) => p.startsWith('refreshTokens.reuseGraceSeconds:')),
        String(bad),
      ).toBe(true);
    }
  });
});
