import { generateKeyPair, exportJWK, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import { decodeJwt, registerClient, RESOURCE, startAs, tokenRequest, type RunningAs } from './helpers/as.js';
import { authorizeAuto, exchangeCode, refreshWith, codeGrant } from './helpers/flow.js';

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('refresh tokens (OAuth 2.1 §4.3, MCP security §Token theft)', () => {
  let t: RunningAs;
  let clientId: string;
  beforeAll(async () => {
    // Window 0: these tests replay immediately, which the default grace window would serve.
    t = await startAs({ devAutoLogin: 'alice', refreshTokens: { reuseGraceSeconds: 0 } });
    clientId = (await registerClient(t.url)).body.client_id;
  });
  afterAll(() => t.close());

  async function initial() {
    const flow = await authorizeAuto(t.url, clientId);
    const res = await exchangeCode(t.url, clientId, flow);
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string };
  }
  const refresh = (rt: string, extra: Record<string, string> = {}) =>
    tokenRequest(t.url, { grant_type: 'refresh_token', refresh_token: rt, client_id: clientId, resource: RESOURCE, ...extra });

  it('issued to clients registered with the refresh_token grant, without offline_access', async () => {
    const tokens = await initial();
    expect(tokens.refresh_token).toBeTypeOf('string');
  });

  it('not issued to clients without the refresh_token grant', async () => {
    const id = (await registerClient(t.url, { grant_types: ['authorization_code'] })).body.client_id;
    const flow = await authorizeAuto(t.url, id);
    const res = await exchangeCode(t.url, id, flow);
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeUndefined();
  });

  it('OAuth 2.1 §4.3.1: public clients get a rotated refresh token; the new access token keeps aud', async () => {
    const tokens = await initial();
    const res = await refresh(tokens.refresh_token);
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeTypeOf('string');
    expect(res.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(decodeJwt(res.body.access_token).payload.aud).toBe(RESOURCE);
  });

  it('OAuth 2.1 §4.3.1 / RFC 9700 §4.14.2: reuse of a rotated refresh token revokes the whole grant', async () => {
    const tokens = await initial();
    const first = await refresh(tokens.refresh_token);
    expect(first.status).toBe(200);
    const replay = await refresh(tokens.refresh_token);
    expectOAuthError(replay, 'invalid_grant', 400);
    // The legitimate holder's newer token died with the grant.
    const afterReplay = await refresh(first.body.refresh_token);
    expectOAuthError(afterReplay, 'invalid_grant', 400);
  });

  it('RFC 8707 §2.2: refresh with a resource that was not granted → invalid_target', async () => {
    const tokens = await initial();
    const res = await refresh(tokens.refresh_token, { resource: 'https://unknown.example/mcp' });
    expectOAuthError(res, 'invalid_target', 400);
  });

  it('a refresh token presented by another client is refused', async () => {
    const tokens = await initial();
    const other = (await registerClient(t.url)).body.client_id;
    const res = await refreshWith(t.url, other, tokens.refresh_token, { resource: undefined });
    expectOAuthError(res, 'invalid_grant', 400);
  });

  it('a disabled account can no longer refresh (grant ends with the account)', async () => {
    const bob = await t.as.store.accounts.create({ id: 'bob-refresh', username: 'bob-refresh', passwordHash: null, disabled: false });
    const other = await startAs({ devAutoLogin: 'bob-refresh', storage: t.as.store });
    try {
      const id = (await registerClient(other.url)).body.client_id;
      const flow = await authorizeAuto(other.url, id);
      const tokens = await exchangeCode(other.url, id, flow);
      expect(tokens.status).toBe(200);
      await t.as.store.accounts.update(bob.id, { disabled: true });
      const res = await refreshWith(other.url, id, tokens.body.refresh_token);
      expectOAuthError(res, 'invalid_grant', 400);
    } finally {
      await other.close();
    }
  });

  it('offline_access is advertised and honoured', async () => {
    const flow = await authorizeAuto(t.url, clientId, { scope: 'notes:read offline_access', prompt: 'consent' });
    const res = await exchangeCode(t.url, clientId, flow);
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeTypeOf('string');
  });
});

describe('client credentials, introspection (RFC 7662) and revocation (RFC 7009)', () => {
  let t: RunningAs;
  let jwtKey: CryptoKey;
  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    jwtKey = privateKey as CryptoKey;
    const publicJwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    t = await startAs({
      devAutoLogin: 'alice',
      clients: [
        {
          client_id: 'svc-basic',
          client_secret: 'svc-basic-secret-0123456789',
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_basic',
          scope: 'notes:read',
        },
        {
          client_id: 'svc-post',
          client_secret: 'svc-post-secret-0123456789',
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_post',
          scope: 'notes:read notes:write',
        },
        {
          client_id: 'svc-jwt',
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'private_key_jwt',
          token_endpoint_auth_signing_alg: 'ES256',
          jwks: { keys: [publicJwk] },
          scope: 'notes:read',
        } as never,
      ],
    });
  });
  afterAll(() => t.close());

  it('client_credentials extension: client_secret_basic → JWT with aud and the registered scope only', async () => {
    const res = await tokenRequest(
      t.url,
      { grant_type: 'client_credentials', resource: RESOURCE, scope: 'notes:read notes:write' },
      { authorization: basic('svc-basic', 'svc-basic-secret-0123456789') },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.refresh_token).toBeUndefined();
    const { payload } = decodeJwt(res.body.access_token);
    expect(payload.aud).toBe(RESOURCE);
    expect(payload.client_id).toBe('svc-basic');
    expect(payload.scope).toBe('notes:read');
  });

  it('client_credentials extension: client_secret_post', async () => {
    const res = await tokenRequest(t.url, {
      grant_type: 'client_credentials',
      resource: RESOURCE,
      scope: 'notes:write',
      client_id: 'svc-post',
      client_secret: 'svc-post-secret-0123456789',
    });
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.access_token).payload.scope).toBe('notes:write');
  });

  /** A client_credentials request of the private_key_jwt client `svc-jwt` (RFC 7523 §2.2). */
  const jwtAuth = (assertion: string) =>
    tokenRequest(t.url, {
      grant_type: 'client_credentials',
      resource: RESOURCE,
      scope: 'notes:read',
      client_id: 'svc-jwt',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });

  it('client_credentials extension: private_key_jwt (RFC 7523)', async () => {
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer('svc-jwt')
      .setSubject('svc-jwt')
      .setAudience(t.as.issuer)
      .setJti(crypto.randomUUID())
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(jwtKey);
    const res = await jwtAuth(assertion);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(decodeJwt(res.body.access_token).payload.aud).toBe(RESOURCE);
  });

  // Each refusal answers no token and never echoes the secret it was sent.
  it.each<{ name: string; secret: string; params: Record<string, string>; headers: Record<string, string> }>([
    {
      name: 'RFC 6749 §5.2: a wrong client secret → 401 invalid_client, secret never echoed',
      secret: 'wrong-secret',
      params: {},
      headers: { authorization: basic('svc-basic', 'wrong-secret') },
    },
    {
      name: 'RFC 6749 §2.3.1 / §5.2: client_secret_post with a wrong secret → 401 invalid_client, secret never echoed',
      secret: 'wrong-post-secret',
      params: { client_id: 'svc-post', client_secret: 'wrong-post-secret' },
      headers: {},
    },
    {
      name: 'RFC 7591 §2 token_endpoint_auth_method: a private_key_jwt client cannot authenticate with a shared secret → 401 invalid_client',
      secret: 'guessed-secret',
      params: { client_id: 'svc-jwt', client_secret: 'guessed-secret' },
      headers: {},
    },
  ])('$name', async ({ secret, params, headers }) => {
    const res = await tokenRequest(t.url, { grant_type: 'client_credentials', resource: RESOURCE, ...params }, headers);
    expectOAuthError(res, 'invalid_client', 401);
    expect(res.body.access_token).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toContain(secret);
  });

  describe('RFC 7523 §3 private_key_jwt assertions that must be refused', () => {
    const assertion = (opts: { key?: CryptoKey; aud?: string; iat?: number; exp?: number; jti?: string } = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer('svc-jwt')
        .setSubject('svc-jwt')
        .setAudience(opts.aud ?? t.as.issuer)
        .setJti(opts.jti ?? crypto.randomUUID())
        .setIssuedAt(opts.iat ?? now)
        .setExpirationTime(opts.exp ?? now + 60)
        .sign(opts.key ?? jwtKey);
    };
    const expectRefused = (res: Awaited<ReturnType<typeof jwtAuth>>) => {
      expectOAuthError(res, 'invalid_client', 401);
      expect(res.body.access_token).toBeUndefined();
    };

    it('RFC 7523 §3 (item 9): an assertion signed with a key not registered for the client → 401 invalid_client', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      expectRefused(await jwtAuth(await assertion({ key: privateKey as CryptoKey })));
    });

    it('RFC 7523 §3 (item 3): an assertion whose aud is not this authorization server → 401 invalid_client', async () => {
      expectRefused(await jwtAuth(await assertion({ aud: 'https://other-as.example/token' })));
    });

    it('RFC 7523 §3 (item 4): an expired assertion → 401 invalid_client', async () => {
      const now = Math.floor(Date.now() / 1000);
      expectRefused(await jwtAuth(await assertion({ iat: now - 600, exp: now - 300 })));
    });

    it('RFC 7523 §3 (item 7): a replayed jti is refused on second use (same assertion, then a new assertion reusing the jti)', async () => {
      const jti = crypto.randomUUID();
      const first = await assertion({ jti });
      const ok = await jwtAuth(first);
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expectRefused(await jwtAuth(first));
      expectRefused(await jwtAuth(await assertion({ jti, iat: Math.floor(Date.now() / 1000) + 1 })));
    });
  });

  it('RFC 8707: client_credentials for an unknown resource → invalid_target', async () => {
    const res = await tokenRequest(
      t.url,
      { grant_type: 'client_credentials', resource: 'https://unknown.example/' },
      { authorization: basic('svc-basic', 'svc-basic-secret-0123456789') },
    );
    expectOAuthError(res, 'invalid_target', 400);
  });

  it('RFC 7662 §2.2 + RFC 7009 §2.1: refresh token introspected active, revoked, then inactive and unusable', async () => {
    const reg = await registerClient(t.url, { application_type: 'web', token_endpoint_auth_method: 'client_secret_basic' });
    expect(reg.status).toBe(201);
    const auth = { authorization: basic(reg.body.client_id, reg.body.client_secret) };
    const flow = await authorizeAuto(t.url, reg.body.client_id);
    const tokens = await tokenRequest(t.url, codeGrant(reg.body.client_id, flow, { client_id: undefined }), auth);
    expect(tokens.status).toBe(200);
    const post = (path: string, token: string) =>
      fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
    const introspect = async (token: string) => {
      const res = await post('/token/introspection', token);
      const json = (await res.json()) as Record<string, unknown>;
      expect(res.status, JSON.stringify(json)).toBe(200);
      return json;
    };
    const active = await introspect(tokens.body.refresh_token);
    expect(active.active).toBe(true);
    expect(active.client_id).toBe(reg.body.client_id);
    expect(active.exp).toBeTypeOf('number');
    expect((await post('/token/revocation', tokens.body.refresh_token)).status).toBe(200);
    expect((await introspect(tokens.body.refresh_token)).active).toBe(false);
    const refreshed = await tokenRequest(
      t.url,
      { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, resource: RESOURCE },
      auth,
    );
    expectOAuthError(refreshed, 'invalid_grant', 400);
  });

  it('RFC 7662 §2.2: a JWT access token introspects as active for its client; RFC 7009 §2.2.1: revocation answers unsupported_token_type', async () => {
    const auth = { authorization: basic('svc-basic', 'svc-basic-secret-0123456789') };
    const { body } = await tokenRequest(t.url, { grant_type: 'client_credentials', resource: RESOURCE, scope: 'notes:read' }, auth);
    const post = (path: string) =>
      fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: body.access_token }),
      });
    const introspection = await post('/token/introspection');
    expect(introspection.status).toBe(200);
    expect(await introspection.json()).toMatchObject({
      active: true,
      client_id: 'svc-basic',
      aud: RESOURCE,
      scope: 'notes:read',
      token_type: 'Bearer',
    });
    const revocation = await post('/token/revocation');
    expect(revocation.status).toBe(400);
    expect(((await revocation.json()) as { error: string }).error).toBe('unsupported_token_type');
  });

  it('RFC 7662 §2.1: introspection requires client authentication', async () => {
    const res = await fetch(`${t.url}/token/introspection`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'x' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/invalid_request|invalid_client/);
  });

  it('RFC 7009 §2.2: revoking an unknown token answers 200 without detail', async () => {
    const res = await fetch(`${t.url}/token/revocation`, {
      method: 'POST',
      headers: { authorization: basic('svc-basic', 'svc-basic-secret-0123456789'), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'not-a-token' }),
    });
    expect(res.status).toBe(200);
  });

  it('RFC 6749 §5.2: unsupported grant type → unsupported_grant_type, no stack', async () => {
    const res = await tokenRequest(t.url, {
      grant_type: 'password',
      username: 'alice',
      password: 'alice-password',
      client_id: 'svc-post',
      client_secret: 'svc-post-secret-0123456789',
    });
    expectOAuthError(res, 'unsupported_grant_type', 400);
    expect(JSON.stringify(res.body)).not.toContain('alice-password');
  });
});
