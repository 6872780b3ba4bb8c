/**
 * Third-party authorization end to end on one AS (issue 41): the RFC 8693 token exchange answers
 * `interaction_required` with a connect URL, the user connects on the connect pages (signed in to
 * the AS as the token's user, PKCE and state at the provider), the exchange then returns the
 * provider's token, refreshed when it expires, and the connection ends with a refused refresh or
 * the user's disconnect on the account page (revoked at the provider).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { RESOURCE, startAs, type RunningAs } from './helpers/as.js';
import { recordingLogger } from './helpers/recording-logger.js';
import { startFakeProvider, type FakeProvider } from '../../../test/security/helpers/third-party-provider.js';
import {
  ACCESS_TOKEN_TYPE,
  TOKEN_EXCHANGE,
  completeConnect,
  driveProvider,
  exchange,
  mcpAccessToken,
  mcpServerClient,
} from '../../../test/security/helpers/third-party-flow.js';

const MCP = { id: 'notes-mcp', secret: 'notes-mcp-secret-0123456789' };
const ALICE = { username: 'alice', password: 'alice-password' };
const ALICE_DRIVE = { username: 'alice-drive', password: 'drive-pass-a' };

describe('third-party authorization: token exchange and the connect pages (issue 41)', () => {
  let provider: FakeProvider;
  let as: RunningAs;
  const log = recordingLogger();

  beforeAll(async () => {
    provider = await startFakeProvider([{ ...ALICE_DRIVE, files: ['alice-plan.txt'] }]);
    as = await startAs({
      logger: log.logger,
      clients: [mcpServerClient(MCP.id, MCP.secret, RESOURCE)],
      thirdParty: { providers: { drive: driveProvider(provider, [RESOURCE]) } },
    });
    provider.redirectUri = `${as.url}/connect/callback`;
  });
  afterAll(async () => {
    await as?.close();
    await provider?.close();
  });
  afterEach(() => {
    provider.expiresIn = 3600;
  });

  /** A fresh user token, a connect (from scratch) through a browser that is not signed in yet. */
  async function connectAlice(): Promise<string> {
    const alice = (await as.as.store.accounts.findByUsername('alice'))!;
    await as.as.store.connections.delete(alice.id, 'drive');
    const { accessToken } = await mcpAccessToken(as.url, ALICE, RESOURCE);
    const first = await exchange(as.url, MCP, accessToken);
    expect(first.status, first.text).toBe(400);
    const page = await completeConnect(String(first.body.connect_uri), new HeadlessBrowser(), {
      asUser: ALICE,
      providerUser: ALICE_DRIVE,
      provider,
    });
    expect(page.status, page.body.slice(0, 400)).toBe(200);
    expect(page.body).toContain('Drive is connected');
    return accessToken;
  }

  it('discovery advertises the grant (RFC 8414 grant_types_supported)', async () => {
    const metadata = (await (await fetch(`${as.url}/.well-known/oauth-authorization-server`)).json()) as {
      grant_types_supported: string[];
    };
    expect(metadata.grant_types_supported).toContain(TOKEN_EXCHANGE);
  });

  it('not connected: 400 interaction_required with the connect URL, its lifetime and the provider, no-store', async () => {
    const alice = (await as.as.store.accounts.findByUsername('alice'))!;
    await as.as.store.connections.delete(alice.id, 'drive');
    const { accessToken } = await mcpAccessToken(as.url, ALICE, RESOURCE);
    const res = await exchange(as.url, MCP, accessToken);
    expect(res.status).toBe(400);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(res.body).toEqual({
      error: 'interaction_required',
      error_description: 'Connect your Drive account to continue',
      connect_uri: expect.stringMatching(new RegExp(`^${as.url}/connect/[A-Za-z0-9_-]{43}$`)),
      connect_expires_in: 600,
      provider: 'drive',
      provider_display_name: 'Drive',
    });
  });

  it('connected: the exchange returns the provider token (RFC 8693 §2.2.1), which reads the user’s files at the provider', async () => {
    const accessToken = await connectAlice();
    const res = await exchange(as.url, MCP, accessToken);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      scope: 'files.read',
    });
    expect(provider.issued).toContain(res.body.access_token);
    const files = await fetch(`${provider.issuer}/api/files`, { headers: { authorization: `Bearer ${String(res.body.access_token)}` } });
    expect(await files.json()).toEqual({ user: 'alice-drive', files: ['alice-plan.txt'] });
    expect(log.audits('third_party.connected').at(-1)?.fields).toMatchObject({ provider: 'drive', resource: RESOURCE, client_id: MCP.id });
    expect(log.audits('third_party.token_exchanged').at(-1)?.fields).toMatchObject({
      provider: 'drive',
      client_id: MCP.id,
      refreshed: false,
    });
    // the exchange is not a token of ours: no token.issued line for it
    expect(log.audits('token.issued').some((l) => l.fields.grant_type === TOKEN_EXCHANGE)).toBe(false);
  });

  it('an expired provider token is refreshed first (RFC 6749 §6); the rotated refresh token is kept', async () => {
    provider.expiresIn = 5; // within the expiry margin: refreshed at the next exchange
    const accessToken = await connectAlice();
    const before = provider.refreshes;
    const first = await exchange(as.url, MCP, accessToken);
    expect(first.status, first.text).toBe(200);
    expect(provider.refreshes).toBe(before + 1);
    const second = await exchange(as.url, MCP, accessToken);
    expect(second.status, second.text).toBe(200);
    // the refresh token the provider rotated in the first refresh worked for the second
    expect(provider.refreshes).toBe(before + 2);
    expect(second.body.access_token).not.toBe(first.body.access_token);
    expect(log.audits('third_party.token_exchanged').at(-1)?.fields).toMatchObject({ refreshed: true });
  });

  it('concurrent exchanges of an expired token refresh it once (a second use of a rotated refresh token would end it)', async () => {
    provider.expiresIn = 5;
    const accessToken = await connectAlice();
    provider.expiresIn = 3600;
    const before = provider.refreshes;
    const answers = await Promise.all(Array.from({ length: 5 }, () => exchange(as.url, MCP, accessToken)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(provider.refreshes).toBe(before + 1);
    expect(new Set(answers.map((a) => a.body.access_token)).size).toBe(1);
  });

  it('the provider refuses the refresh (invalid_grant): the connection ends and the user is asked to connect again', async () => {
    provider.expiresIn = 5;
    const accessToken = await connectAlice();
    provider.revokeAll();
    const res = await exchange(as.url, MCP, accessToken);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('interaction_required');
    expect(res.body.connect_uri).toEqual(expect.stringContaining('/connect/'));
    expect(log.audits('third_party.disconnected').at(-1)?.fields).toMatchObject({ provider: 'drive', reason: 'refresh_refused' });
  });

  it('the account page lists the connection; disconnect (CSRF POST) removes it and revokes it at the provider (RFC 7009)', async () => {
    const accessToken = await connectAlice();
    const ua = new HeadlessBrowser();
    // the account page needs the browser session: sign in through the login page once
    await mcpAccessToken(as.url, ALICE, RESOURCE, ua);
    const page = await ua.request(`${as.url}/account`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Connected accounts');
    expect(page.body).toContain('Disconnect Drive');
    expect(page.body).not.toMatch(new RegExp(provider.issued.map((t) => t.replace(/[-]/g, '\\-')).join('|')));
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const revocationsBefore = provider.revocations.length;
    const forged = await ua.request(`${as.url}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: 'not-the-token', action: 'disconnect', provider: 'drive' }),
    });
    expect(forged.status).toBe(403);
    const done = await ua.request(`${as.url}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, action: 'disconnect', provider: 'drive' }),
    });
    expect(done.status).toBe(303);
    expect(provider.revocations.length).toBe(revocationsBefore + 1);
    expect((await ua.request(`${as.url}/account`)).body).not.toContain('Disconnect Drive');
    const res = await exchange(as.url, MCP, accessToken);
    expect(res.body.error).toBe('interaction_required');
    expect(log.audits('third_party.disconnected').at(-1)?.fields).toMatchObject({ reason: 'user', revoked_at_provider: true });
  });

  it('cancel on the confirmation: the ticket is used up, nothing is connected, the refusal audited', async () => {
    const alice = (await as.as.store.accounts.findByUsername('alice'))!;
    await as.as.store.connections.delete(alice.id, 'drive');
    const { accessToken, ua } = await mcpAccessToken(as.url, ALICE, RESOURCE);
    const { body } = await exchange(as.url, MCP, accessToken);
    const confirm = await ua.follow(String(body.connect_uri), () => false);
    if (!('body' in confirm)) throw new Error('no page');
    const cancelled = await ua.submit(confirm, { action: 'cancel' }, () => false);
    expect('body' in cancelled && cancelled.body).toContain('Nothing was connected');
    expect(await as.as.store.connections.list(alice.id)).toEqual([]);
    expect(log.audits('third_party.refused').at(-1)?.fields).toMatchObject({ reason: 'cancelled', provider: 'drive' });
    const again = await ua.follow(String(body.connect_uri), () => false);
    expect('status' in again && again.status).toBe(400);
  });

  it('the provider tokens are sealed at rest: the store row holds neither token', async () => {
    await connectAlice();
    const alice = (await as.as.store.accounts.findByUsername('alice'))!;
    const row = (await as.as.store.connections.get(alice.id, 'drive'))!;
    for (const t of provider.issued) expect(JSON.stringify(row)).not.toContain(t);
    expect(row.keyId).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });
});

describe('third-party provider with explicit endpoints and no issuer (RFC 9207 §2.4)', () => {
  let provider: FakeProvider;
  let as: RunningAs;

  beforeAll(async () => {
    provider = await startFakeProvider([{ ...ALICE_DRIVE, files: [] }]);
    const explicit = {
      ...driveProvider(provider, [RESOURCE]),
      issuer: undefined,
      authorizationEndpoint: `${provider.issuer}/authorize`,
      tokenEndpoint: `${provider.issuer}/token`,
    };
    as = await startAs({ clients: [mcpServerClient(MCP.id, MCP.secret, RESOURCE)], thirdParty: { providers: { drive: explicit } } });
    provider.redirectUri = `${as.url}/connect/callback`;
  });
  afterAll(async () => {
    await as?.close();
    await provider?.close();
  });

  it('no discovery; an `iss` in the response cannot be compared with anything and is refused; without one the code is redeemed', async () => {
    const { accessToken } = await mcpAccessToken(as.url, ALICE, RESOURCE);
    const first = await exchange(as.url, MCP, accessToken);
    const refused = await completeConnect(String(first.body.connect_uri), new HeadlessBrowser(), {
      asUser: ALICE,
      providerUser: ALICE_DRIVE,
      provider,
    });
    expect(refused.status).toBe(502);
    expect(provider.requests.some((r) => r.path.startsWith('/.well-known/'))).toBe(false);
    expect(provider.requests.some((r) => r.path === '/token')).toBe(false);
    provider.iss = 'none';
    const second = await exchange(as.url, MCP, accessToken);
    const page = await completeConnect(String(second.body.connect_uri), new HeadlessBrowser(), {
      asUser: ALICE,
      providerUser: ALICE_DRIVE,
      provider,
    });
    expect(page.body).toContain('Drive is connected');
    expect((await exchange(as.url, MCP, accessToken)).status).toBe(200);
  });
});
