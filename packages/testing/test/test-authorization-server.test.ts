import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthorizationFlowError,
  decodeAccessToken,
  startTestAuthorizationServer,
  type TestAuthorizationServer,
} from '@mcp-auth-kit/testing';

const RESOURCE = 'http://127.0.0.1:4100/mcp';
const OTHER = 'http://127.0.0.1:4101/mcp';

describe('startTestAuthorizationServer (auto-login)', () => {
  let as: TestAuthorizationServer;
  beforeAll(async () => {
    as = await startTestAuthorizationServer({
      resources: { [RESOURCE]: ['notes:read', 'notes:write'], [OTHER]: { 'files:read': 'Read files' } },
      users: ['alice', { username: 'bob', password: 'bob-password-1' }],
    });
  });
  afterAll(() => as?.close());

  it('listens on loopback with a loopback issuer and serves RFC 8414 metadata with that issuer', async () => {
    expect(as.issuer).toBe(`http://127.0.0.1:${as.port}`);
    const res = await fetch(`${as.issuer}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const metadata = (await res.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(as.issuer);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('RFC 9068: issueAccessToken returns a JWT signed by the AS (JWKS-verified) with aud = resource', async () => {
    const token = await as.issueAccessToken({ resource: RESOURCE, scopes: ['notes:read'] });
    const jwks = createRemoteJWKSet(new URL(as.metadata.jwks_uri));
    const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: as.issuer, audience: RESOURCE, typ: 'at+jwt' });
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload.sub).toBe('alice');
    expect(payload.scope).toBe('notes:read');
    expect(payload.client_id).toBe(as.defaultClient.clientId);
  });

  it('default scopes are every scope of the resource; several resources require naming one', async () => {
    const { claims } = await as.authorize({ resource: RESOURCE });
    expect(claims.scope?.split(' ').sort()).toEqual(['notes:read', 'notes:write']);
    await expect(as.issueAccessToken()).rejects.toThrow(/resource is required/);
    await expect(as.issueAccessToken({ resource: 'http://127.0.0.1:9/nope' })).rejects.toThrow(/not configured/);
  });

  it('subject picks the account (sub = username), including users created on demand', async () => {
    expect((await as.authorize({ resource: RESOURCE, subject: 'bob' })).claims.sub).toBe('bob');
    expect((await as.authorize({ resource: RESOURCE, subject: 'carol' })).claims.sub).toBe('carol');
    expect((await as.authorize({ resource: RESOURCE })).claims.sub).toBe('alice');
  });

  it('lifetime sets exp - iat for that token only', async () => {
    const short = await as.authorize({ resource: RESOURCE, lifetime: 7 });
    expect(short.claims.exp! - short.claims.iat!).toBe(7);
    expect(short.expires_in).toBe(7);
    const normal = await as.authorize({ resource: RESOURCE });
    expect(normal.claims.exp! - normal.claims.iat!).toBe(300);
    await expect(as.issueAccessToken({ resource: RESOURCE, lifetime: 0 })).rejects.toThrow(TypeError);
  });

  it('RFC 8707: a scope of another resource is not granted for this one', async () => {
    const { claims } = await as.authorize({ resource: RESOURCE, scopes: ['notes:read', 'files:read'] });
    expect(claims.aud).toBe(RESOURCE);
    expect(claims.scope).toBe('notes:read');
  });

  it('OAuth 2.1 §4.3.1: refresh rotates the refresh token; the old one is refused once its successor was used', async () => {
    const first = await as.authorize({ resource: RESOURCE, scopes: ['notes:read'] });
    expect(first.refresh_token).toBeTypeOf('string');
    const second = await as.refresh(first.refresh_token!);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.claims.aud).toBe(RESOURCE);
    // The AS's refresh grace window repeats an answer only while its new refresh token is
    // unused (README "Refresh under concurrency"); using it makes the old token a replay.
    await as.refresh(second.refresh_token!);
    await expect(as.refresh(first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('RFC 7009: revoking a refresh token makes it unusable and inactive (RFC 7662)', async () => {
    const tokens = await as.authorize({ resource: RESOURCE });
    expect(await as.introspect(tokens.refresh_token!)).toMatchObject({ active: true, sub: 'alice', client_id: as.defaultClient.clientId });
    await as.revoke(tokens.refresh_token!, { hint: 'refresh_token' });
    expect(await as.introspect(tokens.refresh_token!)).toEqual({ active: false });
    await expect(as.refresh(tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('RFC 7009 §2.2.1: a JWT access token cannot be revoked at this AS → unsupported_token_type, said clearly', async () => {
    const token = await as.issueAccessToken({ resource: RESOURCE });
    const failure = await as.revoke(token).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AuthorizationFlowError);
    expect(failure).toMatchObject({ error: 'unsupported_token_type', message: expect.stringMatching(/short lifetime/) });
  });

  it('rotateKeys: new tokens use the new kid; the old kid stays published; the issuer and port stay', async () => {
    const grant = await as.authorize({ resource: RESOURCE });
    const before = grant.access_token;
    const issuer = as.issuer;
    const { previousKid, currentKid } = await as.rotateKeys();
    expect(currentKid).toBeTypeOf('string');
    expect(currentKid).not.toBe(previousKid);
    expect(decodeProtectedHeader(before).kid).toBe(previousKid);
    const after = await as.issueAccessToken({ resource: RESOURCE });
    expect(decodeProtectedHeader(after).kid).toBe(currentKid);
    const jwks = createRemoteJWKSet(new URL(as.metadata.jwks_uri));
    await jwtVerify(before, jwks, { issuer, audience: RESOURCE });
    await jwtVerify(after, createRemoteJWKSet(new URL(as.metadata.jwks_uri)), { issuer, audience: RESOURCE });
    // The AS restarted on the same store: grants made before still refresh, signed by the new key.
    expect(as.issuer).toBe(issuer);
    const refreshed = await as.refresh(grant.refresh_token!);
    expect(decodeProtectedHeader(refreshed.access_token).kid).toBe(currentKid);
  });

  it('RFC 7591: registerClient registers a public client by DCR; the code flow and refresh work for it', async () => {
    const client = await as.registerClient({ client_name: 'DCR app' });
    expect(client.clientId).not.toBe(as.defaultClient.clientId);
    expect(client.registration).toMatchObject({ client_name: 'DCR app', token_endpoint_auth_method: 'none' });
    const tokens = await as.authorize({ resource: RESOURCE, client });
    expect(tokens.claims.client_id).toBe(client.clientId);
    expect((await as.refresh(tokens.refresh_token!, { client })).claims.client_id).toBe(client.clientId);
  });

  it('RFC 7591 §3.2.2: bad metadata is refused with the AS error code', async () => {
    await expect(as.registerClient({ redirect_uris: ['javascript:alert(1)'] })).rejects.toMatchObject({ error: 'invalid_redirect_uri' });
  });

  it('concurrent issuances with and without lifetimes each get their own (no leak between them)', async () => {
    const lifetimes = [5, undefined, 11, undefined, 17];
    const tokens = await Promise.all(
      lifetimes.map((lifetime, i) => as.authorize({ resource: RESOURCE, lifetime, subject: i % 2 ? 'bob' : 'alice' })),
    );
    expect(tokens.map((t) => t.claims.exp! - t.claims.iat!)).toEqual([5, 300, 11, 300, 17]);
    expect(tokens.map((t) => t.claims.sub)).toEqual(['alice', 'bob', 'alice', 'bob', 'alice']);
  });

  it('a flow error carries the OAuth error code (unknown client → invalid_client page)', async () => {
    await expect(as.authorize({ resource: RESOURCE, client: 'no-such-client' })).rejects.toMatchObject({ error: 'invalid_client' });
  });
});

describe('startTestAuthorizationServer (autoLogin: false: the real login and consent pages)', () => {
  let as: TestAuthorizationServer;
  beforeAll(async () => {
    as = await startTestAuthorizationServer({
      resources: { [RESOURCE]: ['notes:read'] },
      users: [{ username: 'dana', password: 'dana-password-1' }, 'erin'],
      autoLogin: false,
      cimd: false,
    });
  });
  afterAll(() => as?.close());

  it('fills in the login form (CSRF kept) and approves consent', async () => {
    expect(decodeAccessToken(await as.issueAccessToken({ subject: 'dana' })).claims.sub).toBe('dana');
    expect(decodeAccessToken(await as.issueAccessToken({ subject: 'erin' })).claims.sub).toBe('erin');
    expect(as.passwordOf('dana')).toBe('dana-password-1');
  });

  it('with auto-login off, login_hint signs nobody in: the password is really checked', async () => {
    await as.store.accounts.update('dana', { passwordHash: null });
    await expect(as.issueAccessToken({ subject: 'dana' })).rejects.toMatchObject({ error: 'login_failed' });
  });

  it('CIMD is off with cimd: false', async () => {
    await expect(as.clientMetadataHost()).rejects.toThrow(/cimd: false/);
  });
});

describe('startTestAuthorizationServer options', () => {
  it('hostname "localhost" gives an http://localhost:<port> issuer that issues tokens', async () => {
    const as = await startTestAuthorizationServer({
      hostname: 'localhost',
      resources: { 'http://localhost:4300/mcp': ['a'] },
      cimd: false,
    });
    try {
      expect(as.issuer).toBe(`http://localhost:${as.port}`);
      const { claims } = await as.authorize();
      expect(claims.iss).toBe(as.issuer);
      expect(claims.aud).toBe('http://localhost:4300/mcp');
    } finally {
      await as.close();
    }
  });

  it('close() can be called twice', async () => {
    const as = await startTestAuthorizationServer({ resources: { [RESOURCE]: ['a'] }, cimd: false });
    await as.close();
    await as.close();
    await expect(fetch(`${as.issuer}/.well-known/oauth-authorization-server`)).rejects.toThrow();
  });

  it('autoLogin: "<username>" picks the default subject', async () => {
    const as = await startTestAuthorizationServer({ resources: { [RESOURCE]: ['a'] }, users: ['x', 'y'], autoLogin: 'y', cimd: false });
    try {
      expect((await as.authorize()).claims.sub).toBe('y');
    } finally {
      await as.close();
    }
  });

  it("an invalid configuration is refused with the AS's ConfigError (RFC 8707 §2: resource without fragment)", async () => {
    await expect(startTestAuthorizationServer({ resources: { 'http://127.0.0.1:4400/mcp#x': ['a'] }, cimd: false })).rejects.toThrow(
      /RFC 8707/,
    );
  });
});
