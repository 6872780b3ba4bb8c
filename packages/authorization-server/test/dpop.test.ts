// RFC 9449 DPoP at the authorization server (oidc-provider features.dPoP, configured by src/tokens/dpop.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigError } from '../src/index.js';
import { validateConfig } from '../src/ops/index.js';
import { decodeJwt, registerClient, RESOURCE, startAs, tokenRequest, type RunningAs } from './helpers/as.js';
import { authorizeAuto, codeGrant } from './helpers/flow.js';
import { dpopKey, proof, type Key } from './helpers/dpop.js';
import { respeltSignature, expectOAuthError } from '@mcp-auth-kit/test-utils';
import { startAsForDescribe } from './helpers/for-describe.js';

async function codeFor(t: RunningAs, clientId: string, key?: Key) {
  return codeGrant(clientId, await authorizeAuto(t.url, clientId, key ? { dpop_jkt: key.jkt } : {}));
}

describe('RFC 9449 DPoP at the authorization server', () => {
  let t: RunningAs;
  let clientId: string;
  let key: Key;
  startAsForDescribe({ devAutoLogin: 'alice' }, async (started) => {
    t = started;
    clientId = (await registerClient(t.url)).body.client_id;
    key = await dpopKey();
  });

  it('RFC 9449 §5.1: metadata advertises dpop_signing_alg_values_supported (asymmetric only)', async () => {
    const meta = (await (await fetch(`${t.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(meta.dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA', 'Ed25519', 'PS256', 'RS256']);
  });

  it('RFC 9449 §5 / §6.1: a token request with a proof gets token_type DPoP and a JWT access token with cnf.jkt; the refresh token is bound too', async () => {
    const params = await codeFor(t, clientId, key);
    const res = await tokenRequest(t.url, params, { dpop: await proof(key, `${t.url}/token`) });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(decodeJwt(res.body.access_token).payload.cnf).toEqual({ jkt: key.jkt });
    // public client: the refresh token is bound to the key (RFC 9449 §5)
    const refresh = { grant_type: 'refresh_token', refresh_token: res.body.refresh_token, client_id: clientId, resource: RESOURCE };
    const stolen = await tokenRequest(t.url, refresh);
    expectOAuthError(stolen, 'invalid_grant', 400);
    const other = await tokenRequest(t.url, refresh, { dpop: await proof(await dpopKey(), `${t.url}/token`) });
    expect(other.status).toBe(400);
    const ok = await tokenRequest(t.url, refresh, { dpop: await proof(key, `${t.url}/token`) });
    expect(ok.status).toBe(200);
    expect(decodeJwt(ok.body.access_token).payload.cnf).toEqual({ jkt: key.jkt });
  });

  it('RFC 9449 §10: a code bound with dpop_jkt cannot be redeemed with another key', async () => {
    const params = await codeFor(t, clientId, key);
    const res = await tokenRequest(t.url, params, { dpop: await proof(await dpopKey(), `${t.url}/token`) });
    expectOAuthError(res, 'invalid_grant', 400);
  });

  it('RFC 9449 §11.1: a replayed proof at the token endpoint is refused', async () => {
    const p = await proof(key, `${t.url}/token`);
    const first = await tokenRequest(t.url, await codeFor(t, clientId, key), { dpop: p });
    expect(first.status).toBe(200);
    const replay = await tokenRequest(t.url, await codeFor(t, clientId, key), { dpop: p });
    expect(replay.status).toBe(400);
    // oidc-provider answers a replayed proof at the token endpoint with invalid_grant
    expect(replay.body.error).toBe('invalid_grant');
  });

  it('RFC 9449 §4.2 / RFC 4648 §3.5: a valid proof spelt another way (signature bits, whitespace) is refused; the code stays redeemable', async () => {
    const params = await codeFor(t, clientId, key);
    const valid = await proof(key, `${t.url}/token`);
    for (const sent of [
      respeltSignature(valid),
      `${valid.slice(0, -12)} ${valid.slice(-12)}`,
      `${valid.slice(0, 30)}\t${valid.slice(30)}`,
    ]) {
      const res = await tokenRequest(t.url, params, { dpop: sent });
      expectOAuthError(res, 'invalid_dpop_proof', 400);
    }
    const ok = await tokenRequest(t.url, params, { dpop: await proof(key, `${t.url}/token`) });
    expect(ok.status).toBe(200);
    expect(ok.body.token_type).toBe('DPoP');
  });

  it('RFC 9449 §4.3: a proof for another htu is refused', async () => {
    const res = await tokenRequest(t.url, await codeFor(t, clientId, key), { dpop: await proof(key, `${t.url}/other`) });
    expectOAuthError(res, 'invalid_dpop_proof', 400);
  });

  it('RFC 9449 §4.3 (check 8): a proof whose htm is not the request method (GET for a POST) is refused with invalid_dpop_proof', async () => {
    const params = await codeFor(t, clientId, key);
    const res = await tokenRequest(t.url, params, { dpop: await proof(key, `${t.url}/token`, undefined, { htm: 'GET' }) });
    expectOAuthError(res, 'invalid_dpop_proof', 400);
    expect(res.body.access_token).toBeUndefined();
    // the refused proof did not use up the code: a correct proof still redeems it
    const ok = await tokenRequest(t.url, params, { dpop: await proof(key, `${t.url}/token`) });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.token_type).toBe('DPoP');
  });

  it.each([
    ['10 minutes old', -600],
    ['10 minutes in the future', 600],
  ])(
    'RFC 9449 §4.3 (check 11) + §8: a proof whose iat is %s is refused; the server answers use_dpop_nonce with a DPoP-Nonce',
    async (_label, offset) => {
      const params = await codeFor(t, clientId, key);
      const iat = Math.floor(Date.now() / 1000) + offset;
      const res = await tokenRequest(t.url, params, { dpop: await proof(key, `${t.url}/token`, undefined, { iat }) });
      expect(res.status).toBe(400);
      // A nonce secret is always configured (src/tokens/dpop.ts), so oidc-provider refuses a proof outside
      // its iat window with use_dpop_nonce (RFC 9449 §8) rather than invalid_dpop_proof: the stale
      // proof is refused either way, and the client learns how to prove freshness.
      expect(res.body.error).toBe('use_dpop_nonce');
      expect(res.body.access_token).toBeUndefined();
      const nonce = res.headers.get('dpop-nonce');
      expect(nonce).toBeTruthy();
      // RFC 9449 §8: the retry with the server's nonce is accepted.
      const ok = await tokenRequest(t.url, params, { dpop: await proof(key, `${t.url}/token`, nonce!) });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.token_type).toBe('DPoP');
    },
  );

  it("RFC 9449 §4.3 (check 11) + §8: a stale proof carrying a nonce that is not the server's is refused", async () => {
    const params = await codeFor(t, clientId, key);
    const iat = Math.floor(Date.now() / 1000) - 600;
    const res = await tokenRequest(t.url, params, { dpop: await proof(key, `${t.url}/token`, 'made-up-nonce', { iat }) });
    expectOAuthError(res, 'use_dpop_nonce', 400);
    expect(res.headers.get('dpop-nonce')).toBeTruthy();
    expect(res.body.access_token).toBeUndefined();
  });

  it("without a proof the token stays a Bearer token (DPoP is the client's choice unless the resource requires it)", async () => {
    const res = await tokenRequest(t.url, await codeFor(t, clientId));
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
    expect(decodeJwt(res.body.access_token).payload.cnf).toBeUndefined();
  });
});

describe('RFC 9449 §8 DPoP nonces at the authorization server', () => {
  const nonceSecret = Buffer.alloc(32, 9).toString('base64url');
  let a: RunningAs;
  let b: RunningAs;
  beforeAll(async () => {
    a = await startAs({ devAutoLogin: 'alice', dpop: { nonceSecret, requireNonce: true } });
    b = await startAs({ devAutoLogin: 'alice', storage: a.as.store, dpop: { nonceSecret, requireNonce: true } });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it("RFC 9449 §8: with requireNonce, a proof without nonce gets use_dpop_nonce and a DPoP-Nonce; one instance's nonce works at another with the same secret", async () => {
    const key = await dpopKey();
    const clientId = (await registerClient(a.url)).body.client_id;
    const params = await codeFor(a, clientId, key);
    const first = await tokenRequest(a.url, params, { dpop: await proof(key, `${a.url}/token`) });
    expectOAuthError(first, 'use_dpop_nonce', 400);
    const nonce = first.headers.get('dpop-nonce');
    expect(nonce).toBeTruthy();
    // the instances have different issuers here: a nonce only depends on the shared secret
    const res = await tokenRequest(a.url, params, { dpop: await proof(key, `${a.url}/token`, nonce!) });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    const atB = await tokenRequest(
      b.url,
      { grant_type: 'refresh_token', refresh_token: 'x', client_id: clientId },
      { dpop: await proof(key, `${b.url}/token`, nonce!) },
    );
    // the nonce was accepted (the refusal is about the made-up refresh token, not the proof)
    expect(atB.body.error).toBe('invalid_grant');
  });

  it('RFC 9449 §8: without a configured nonceSecret, instances sharing a store derive the same nonce key', async () => {
    const c = await startAs({ devAutoLogin: 'alice', dpop: { requireNonce: true } });
    const d = await startAs({ devAutoLogin: 'alice', storage: c.as.store, dpop: { requireNonce: true } });
    const lone = await startAs({ devAutoLogin: 'alice', dpop: { requireNonce: true } });
    try {
      const key = await dpopKey();
      const shared = (await registerClient(c.url)).body.client_id as string;
      const own = (await registerClient(lone.url)).body.client_id as string;
      const refresh = (client_id: string) => ({ grant_type: 'refresh_token', refresh_token: 'x', client_id });
      const first = await tokenRequest(c.url, refresh(shared), { dpop: await proof(key, `${c.url}/token`) });
      expect(first.body.error).toBe('use_dpop_nonce');
      const nonce = first.headers.get('dpop-nonce')!;
      const atD = await tokenRequest(d.url, refresh(shared), { dpop: await proof(key, `${d.url}/token`, nonce) });
      // the nonce was accepted (the refusal is about the made-up refresh token)
      expect(atD.body.error).toBe('invalid_grant');
      // another store, another key: the nonce is refused there
      const atLone = await tokenRequest(lone.url, refresh(own), { dpop: await proof(key, `${lone.url}/token`, nonce) });
      expect(atLone.body.error).toBe('use_dpop_nonce');
    } finally {
      await d.close();
      await c.close();
      await lone.close();
    }
  });

  it('config: a nonceSecret that is not 32 bytes of base64url and symmetric algorithms are refused', () => {
    const base = {
      issuer: 'http://localhost:9000',
      resources: [{ resource: RESOURCE, scopes: { a: 'a' } }],
      storage: { kind: 'memory' as const },
    };
    let problems: readonly string[] = [];
    try {
      validateConfig({ ...base, dpop: { nonceSecret: 'short', algorithms: ['HS256'] } });
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems.some((p) => p.startsWith('dpop.nonceSecret'))).toBe(true);
    expect(problems.some((p) => p.startsWith('dpop.algorithms'))).toBe(true);
  });
});
