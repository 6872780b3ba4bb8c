/**
 * RFC 7009 §2.1 / RFC 7662 §4: a client revokes and introspects only its own tokens; the
 * policies are explicit (no oidc-provider "default allowedPolicy function called" warning).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import { CONFIDENTIAL_WEB_CLIENT, registerClient, startAs, tokenRequest, type RunningAs } from './helpers/as.js';
import { authorizeAuto, codeGrant } from './helpers/flow.js';
import { createIntrospectionPolicy } from '../src/ops/token-policies.js';
import { ResourceRegistry } from '../src/tokens/resources.js';

const printed: string[] = [];
const originalWrite = process.stdout.write.bind(process.stdout);
const originalErr = process.stderr.write.bind(process.stderr);

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

async function post(base: string, path: string, params: Record<string, string>, auth?: string) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
    body: new URLSearchParams(params),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

describe('revocation and introspection policies', () => {
  let t: RunningAs;
  let owner: { id: string; auth: string };
  let other: { id: string; auth: string };
  let publicOther: string;
  let refreshToken: string;

  beforeAll(async () => {
    process.stdout.write = ((c: unknown, ...r: unknown[]) => (
      printed.push(String(c)), (originalWrite as (...a: unknown[]) => boolean)(c, ...r)
    )) as typeof process.stdout.write;
    process.stderr.write = ((c: unknown, ...r: unknown[]) => (
      printed.push(String(c)), (originalErr as (...a: unknown[]) => boolean)(c, ...r)
    )) as typeof process.stderr.write;
    t = await startAs({ devAutoLogin: 'alice' });
    const a = (await registerClient(t.url, CONFIDENTIAL_WEB_CLIENT)).body;
    const b = (await registerClient(t.url, CONFIDENTIAL_WEB_CLIENT)).body;
    owner = { id: a.client_id, auth: basic(a.client_id, a.client_secret) };
    other = { id: b.client_id, auth: basic(b.client_id, b.client_secret) };
    publicOther = (await registerClient(t.url)).body.client_id;
    const flow = await authorizeAuto(t.url, owner.id);
    const tokens = await tokenRequest(t.url, codeGrant(owner.id, flow, { client_id: undefined }), { authorization: owner.auth });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    refreshToken = tokens.body.refresh_token;
  });
  afterAll(async () => {
    process.stdout.write = originalWrite;
    process.stderr.write = originalErr;
    await t?.close();
  });

  it('RFC 7662 §4: another client (authenticated) learns nothing about the token: {"active":false}', async () => {
    const res = await post(t.url, '/token/introspection', { token: refreshToken }, other.auth);
    expect(res).toEqual({ status: 200, body: { active: false } });
    const mine = await post(t.url, '/token/introspection', { token: refreshToken }, owner.auth);
    expect(mine.body).toMatchObject({ active: true, client_id: owner.id });
  });

  it('RFC 7009 §2.1: another authenticated client cannot revoke the token (invalid_request)', async () => {
    const res = await post(t.url, '/token/revocation', { token: refreshToken }, other.auth);
    expectOAuthError(res, 'invalid_request', 400);
    expect((await post(t.url, '/token/introspection', { token: refreshToken }, owner.auth)).body.active).toBe(true);
  });

  it('RFC 7009 §2.1: a public client naming another client gets the empty 200 and the token stays valid', async () => {
    const res = await post(t.url, '/token/revocation', { token: refreshToken, client_id: publicOther });
    expect(res.status).toBe(200);
    expect((await post(t.url, '/token/introspection', { token: refreshToken }, owner.auth)).body.active).toBe(true);
  });

  it('RFC 7009 §2.1: the owner revokes its token', async () => {
    expect((await post(t.url, '/token/revocation', { token: refreshToken }, owner.auth)).status).toBe(200);
    expect((await post(t.url, '/token/introspection', { token: refreshToken }, owner.auth)).body.active).toBe(false);
  });

  it('oidc-provider never falls back to its default policies (no warning printed)', () => {
    expect(printed.join('')).not.toMatch(/allowedPolicy function called/);
  });
});

describe('introspection policy (RFC 7662 §4): which resource server may see an access token', () => {
  const registry = new ResourceRegistry([
    { resource: 'https://mcp.example/a', scopes: { r: 'R' }, introspectionClients: ['rs-a'] },
    { resource: 'https://mcp.example/b', scopes: { r: 'R' } },
  ]);
  const allowed = createIntrospectionPolicy(registry, new Set(['rs-a', 'https://mcp.example/b', 'rs-public']));
  const ctx = {} as never;
  const accessToken = (aud: string, kind = 'AccessToken') => ({ clientId: 'owner', kind, aud });

  /** Whether `policy` lets the client `clientId`, authenticated by `method`, see `token`. */
  const mayIntrospect = (clientId: string, method: string, token: object, policy = allowed) =>
    policy(ctx, { clientId, clientAuthMethod: method }, token as never);

  it('the owner always; a listed confidential client for its resource; a static client named like the resource', async () => {
    expect(await mayIntrospect('owner', 'none', accessToken('https://mcp.example/b'))).toBe(true);
    expect(await mayIntrospect('rs-a', 'client_secret_basic', accessToken('https://mcp.example/a'))).toBe(true);
    expect(await mayIntrospect('https://mcp.example/b', 'private_key_jwt', accessToken('https://mcp.example/b', 'ClientCredentials'))).toBe(
      true,
    );
  });

  it("not: another resource's client, a refresh token, a public client, a dynamic (DCR/CIMD) client named like the resource", async () => {
    expect(await mayIntrospect('rs-a', 'client_secret_basic', accessToken('https://mcp.example/b'))).toBe(false);
    expect(
      await mayIntrospect('rs-a', 'client_secret_basic', { clientId: 'owner', kind: 'RefreshToken', aud: 'https://mcp.example/a' }),
    ).toBe(false);
    expect(await mayIntrospect('rs-public', 'none', accessToken('https://mcp.example/a'))).toBe(false);
    const dynamic = createIntrospectionPolicy(registry, new Set());
    expect(await mayIntrospect('https://mcp.example/b', 'private_key_jwt', accessToken('https://mcp.example/b'), dynamic)).toBe(false);
  });

  it("RFC 7662 §2.2: a disabled user's token is not active for anyone (owner or resource server); the account is read only for a caller who may see the token", async () => {
    const asked: string[] = [];
    const withAccounts = createIntrospectionPolicy(registry, new Set(['rs-a']), async (accountId) => {
      asked.push(accountId);
      return accountId !== 'disabled-user';
    });
    const owner = { clientId: 'owner', clientAuthMethod: 'none' };
    const rs = { clientId: 'rs-a', clientAuthMethod: 'client_secret_basic' };
    const token = (accountId: string) => ({ ...accessToken('https://mcp.example/a'), accountId });
    expect(await withAccounts(ctx, owner, token('disabled-user'))).toBe(false);
    expect(await withAccounts(ctx, rs, token('disabled-user'))).toBe(false);
    expect(await withAccounts(ctx, owner, { clientId: 'owner', kind: 'RefreshToken', accountId: 'disabled-user' })).toBe(false);
    expect(await withAccounts(ctx, owner, token('enabled-user'))).toBe(true);
    // client credentials: no account to ask about
    expect(await withAccounts(ctx, rs, accessToken('https://mcp.example/a', 'ClientCredentials'))).toBe(true);
    asked.length = 0;
    expect(await withAccounts(ctx, { clientId: 'stranger', clientAuthMethod: 'none' }, token('disabled-user'))).toBe(false);
    expect(asked).toEqual([]);
  });
});
