import { describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import { REDIRECT, registerClient, type RunningAs } from './helpers/as.js';
import { authorizeAuto } from './helpers/flow.js';
import { startAsForDescribe } from './helpers/for-describe.js';

describe('RFC 7591 dynamic client registration with MCP rules', () => {
  let t: RunningAs;
  startAsForDescribe({ devAutoLogin: 'alice', registration: { rateLimit: { max: 1000, windowSeconds: 60 } } }, (started) => (t = started));

  it('RFC 7591 §3.2.1: a native public client registers (201) with its metadata echoed', async () => {
    const reg = await registerClient(t.url);
    expect(reg.status).toBe(201);
    expect(reg.body.client_id).toBeTypeOf('string');
    expect(reg.body.application_type).toBe('native');
    expect(reg.body.redirect_uris).toEqual([REDIRECT]);
    expect(reg.body.client_secret).toBeUndefined();
    expect(reg.body.registration_access_token).toBeTypeOf('string');
    expect(reg.body.registration_client_uri).toContain('/reg/');
  });

  it('RFC 7591 §3.2.1: registration responses carry credentials and are not cacheable', async () => {
    const res = await fetch(`${t.url}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://app.example/cb'], application_type: 'web' }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(((await res.json()) as { client_secret?: string }).client_secret).toBeTypeOf('string');
  });

  it('MCP client-registration §application_type: native + https loopback redirect is refused', async () => {
    const reg = await registerClient(t.url, { redirect_uris: ['https://127.0.0.1:8443/cb'] });
    expectOAuthError(reg, 'invalid_redirect_uri', 400);
  });

  it('MCP client-registration §application_type: native + http on a non-loopback host is refused', async () => {
    const reg = await registerClient(t.url, { redirect_uris: ['http://app.example/cb'] });
    expect(reg.status).toBe(400);
    expect(reg.body.error).toMatch(/invalid_redirect_uri|invalid_client_metadata/);
  });

  it('MCP security §Communication: a web client with an http non-loopback redirect is refused', async () => {
    const reg = await registerClient(t.url, { application_type: 'web', redirect_uris: ['http://app.example/cb'] });
    expectOAuthError(reg, 'invalid_redirect_uri', 400);
  });

  it('a web client with https redirect URIs registers', async () => {
    const reg = await registerClient(t.url, { application_type: 'web', redirect_uris: ['https://app.example/cb'] });
    expect(reg.status).toBe(201);
    expect(reg.body.application_type).toBe('web');
  });

  it('RFC 8252 §7.1: native custom-scheme redirect URIs are accepted', async () => {
    const reg = await registerClient(t.url, { redirect_uris: ['com.example.app:/oauth/cb'] });
    expect(reg.status).toBe(201);
  });

  it.each(['javascript:alert(1)', 'data:text/html,hi', 'file:///etc/passwd', 'vbscript:msgbox'])(
    'OAuth 2.1 §7.12.2: dangerous redirect scheme %s is refused',
    async (uri) => {
      for (const applicationType of ['native', 'web']) {
        const reg = await registerClient(t.url, { application_type: applicationType, redirect_uris: [uri] });
        expect(reg.status, `${applicationType} ${uri}`).toBe(400);
        expect(reg.body.error).toMatch(/invalid_redirect_uri|invalid_client_metadata/);
        expect(reg.body.error_description).toMatch(/scheme|uri/i);
      }
    },
  );

  it('oidc-provider defaults application_type to web, and only native clients get any-port loopback: omitted application_type with loopback redirects is treated as native (any-port loopback)', async () => {
    const reg = await registerClient(t.url, { application_type: undefined, redirect_uris: ['http://127.0.0.1/callback'] });
    expect(reg.status).toBe(201);
    expect(reg.body.application_type).toBe('native');
    const flow = await authorizeAuto(t.url, reg.body.client_id, { redirect_uri: 'http://127.0.0.1:7777/callback' });
    expect(flow.callback.searchParams.get('code')).toBeTruthy();
  });

  it('MCP security §exact redirect matching: a web client gets no port flexibility', async () => {
    const reg = await registerClient(t.url, { application_type: 'web', redirect_uris: ['http://127.0.0.1:7777/callback'] });
    expect(reg.status).toBe(201);
    await expect(authorizeAuto(t.url, reg.body.client_id, { redirect_uri: 'http://127.0.0.1:7778/callback' })).rejects.toThrow(
      /flow stopped/,
    );
  });

  it('RFC 7591 §3.2.1: confidential DCR clients get a secret that expires', async () => {
    const reg = await registerClient(t.url, {
      application_type: 'web',
      redirect_uris: ['https://app.example/cb'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(reg.status).toBe(201);
    expect(reg.body.client_secret).toBeTypeOf('string');
    const now = Math.floor(Date.now() / 1000);
    expect(reg.body.client_secret_expires_at).toBeGreaterThan(now + 29 * 24 * 3600);
    expect(reg.body.client_secret_expires_at).toBeLessThanOrEqual(now + 30 * 24 * 3600 + 5);
  });

  it('DCR clients cannot register the client_credentials grant (machine access needs pre-registration)', async () => {
    const reg = await registerClient(t.url, {
      application_type: 'web',
      redirect_uris: ['https://app.example/cb'],
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials'],
      response_types: [],
    });
    expectOAuthError(reg, 'invalid_client_metadata', 400);
  });

  it('RFC 7591 §2: unknown metadata members (e.g. a `resource` member) are ignored, not fatal', async () => {
    const reg = await registerClient(t.url, { resource: 'http://127.0.0.1:3999/mcp', software_id: 'x', some_vendor_field: true });
    expect(reg.status).toBe(201);
    expect(reg.body.some_vendor_field).toBeUndefined();
  });

  it('oidc-provider treats the registered scope of a client as an allowlist: resource scopes in DCR `scope` are accepted', async () => {
    const reg = await registerClient(t.url, { scope: 'notes:read' });
    expect(reg.status).toBe(201);
  });

  it('RFC 7591 §3.2.2: unknown scopes are refused with invalid_client_metadata', async () => {
    const reg = await registerClient(t.url, { scope: 'admin:everything' });
    expectOAuthError(reg, 'invalid_client_metadata', 400);
  });

  it('RFC 7591 §3.2.2: a malformed body is a 400 OAuth error, never a 500', async () => {
    const res = await fetch(`${t.url}/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, string>;
    expect(body.error).toMatch(/invalid_request|invalid_client_metadata/);
    expect(JSON.stringify(body)).not.toMatch(/at .*\.js:\d+/);
  });

  it('RFC 7592 §2: the client reads and deletes its registration with the registration access token', async () => {
    const reg = await registerClient(t.url);
    const auth = { authorization: `Bearer ${reg.body.registration_access_token}` };
    const read = await fetch(reg.body.registration_client_uri, { headers: auth });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { client_id: string }).client_id).toBe(reg.body.client_id);
    const noAuth = await fetch(reg.body.registration_client_uri);
    expect(noAuth.status).toBe(401);
    const del = await fetch(reg.body.registration_client_uri, { method: 'DELETE', headers: auth });
    expect(del.status).toBe(204);
    const after = await fetch(reg.body.registration_client_uri, { headers: auth });
    expect(after.status).toBe(401);
  });
});

describe('pre-registered clients', () => {
  let t: RunningAs;
  startAsForDescribe(
    {
      devAutoLogin: 'alice',
      clients: [
        { client_id: 'desktop', client_name: 'Desktop', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' },
      ],
    },
    (started) => (t = started),
  );

  it('RFC 8252 §7.3: a configured loopback-only client without application_type is native (any port)', async () => {
    const flow = await authorizeAuto(t.url, 'desktop', { redirect_uri: REDIRECT });
    expect(flow.callback.searchParams.get('code')).toBeTruthy();
  });
});

describe('DCR rate limit and initial access token', () => {
  let t: RunningAs;
  const iat = 'initial-access-token-0123456789';
  startAsForDescribe({ registration: { rateLimit: { max: 2, windowSeconds: 60 }, initialAccessToken: iat } }, (started) => (t = started));

  it('RFC 7591 §3: with an initial access token configured, registration without it is refused', async () => {
    const reg = await registerClient(t.url);
    expectOAuthError(reg, 'invalid_token', 401);
  });

  it('RFC 7591 §3 + abuse protection: registrations per address are rate limited (429)', async () => {
    // The refused request above already counted once.
    const ok = await registerClient(t.url, {}, { authorization: `Bearer ${iat}` });
    expect(ok.status).toBe(201);
    const limited = await registerClient(t.url, {}, { authorization: `Bearer ${iat}` });
    expectOAuthError(limited, 'invalid_request', 429);
  });
});

describe('RFC 7592 client update (PUT to registration_client_uri) with MCP rules', () => {
  let t: RunningAs;
  startAsForDescribe({ devAutoLogin: 'alice', registration: { rateLimit: { max: 1000, windowSeconds: 60 } } }, (started) => (t = started));

  type Registration = { client_id: string; registration_client_uri: string; registration_access_token: string; [k: string]: any };

  /** `token: null` sends no Authorization header. */
  const update = async (reg: Registration, metadata: Record<string, unknown>, token: string | null = reg.registration_access_token) => {
    const res = await fetch(reg.registration_client_uri, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
      body: JSON.stringify({ client_id: reg.client_id, ...metadata }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
  };
  const read = async (reg: Registration, token = reg.registration_access_token) => {
    const res = await fetch(reg.registration_client_uri, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  /** The metadata of a native public client, as the client sends it (RFC 7592 §2.2: all fields, every time). */
  const nativeMetadata = (extra: Record<string, unknown> = {}) => ({
    redirect_uris: [REDIRECT],
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    client_name: 'Test Client',
    ...extra,
  });
  const register = async (metadata: Record<string, unknown> = {}) => {
    const reg = await registerClient(t.url, metadata);
    expect(reg.status).toBe(201);
    return reg.body as Registration;
  };

  it('RFC 7592 §2.2: a valid update replaces client_name and redirect_uris; the new values are read back and used', async () => {
    const reg = await register();
    const updatedRedirect = 'http://127.0.0.1:7777/updated';
    const res = await update(reg, nativeMetadata({ client_name: 'Renamed Client', redirect_uris: [updatedRedirect] }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.client_id).toBe(reg.client_id);
    expect(res.body.client_name).toBe('Renamed Client');
    expect(res.body.redirect_uris).toEqual([updatedRedirect]);
    expect(res.body.registration_client_uri).toBe(reg.registration_client_uri);
    expect(res.body.registration_access_token).toBeTypeOf('string');

    const after = await read(reg, res.body.registration_access_token);
    expect(after.status).toBe(200);
    expect(after.body.client_name).toBe('Renamed Client');
    expect(after.body.redirect_uris).toEqual([updatedRedirect]);

    // The authorization endpoint follows the new registration: new URI accepted, old one refused.
    const flow = await authorizeAuto(t.url, reg.client_id, { redirect_uri: updatedRedirect });
    expect(flow.callback.searchParams.get('code')).toBeTruthy();
    await expect(authorizeAuto(t.url, reg.client_id, { redirect_uri: REDIRECT })).rejects.toThrow(/flow stopped/);
  });

  it('RFC 7592 §2.2 / §3: the registration access token is rotated on update; the old one stops working', async () => {
    const reg = await register();
    const res = await update(reg, nativeMetadata({ client_name: 'Rotated' }));
    expect(res.status).toBe(200);
    const rotated = res.body.registration_access_token as string;
    expect(rotated).not.toBe(reg.registration_access_token);
    const old = await read(reg);
    expectOAuthError(old, 'invalid_token', 401);
    expect((await read(reg, rotated)).status).toBe(200);
  });

  it('RFC 7592 §2.2: fields omitted from the update are removed, not kept', async () => {
    const reg = await register({ client_name: 'Named', client_uri: 'https://app.example/' });
    const { client_name: _name, ...withoutName } = nativeMetadata();
    const res = await update(reg, withoutName);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.client_name).toBeUndefined();
    expect(res.body.client_uri).toBeUndefined();
  });

  it.each(['javascript:alert(1)', 'data:text/html,hi', 'file:///etc/passwd', 'vbscript:msgbox'])(
    'RFC 7592 §2.2 + OAuth 2.1 §7.12.2: an update to the dangerous redirect scheme %s is refused and the client is unchanged',
    async (uri) => {
      const reg = await register();
      for (const applicationType of ['native', 'web']) {
        const res = await update(reg, nativeMetadata({ application_type: applicationType, redirect_uris: [uri] }));
        expect(res.status, `${applicationType} ${uri}`).toBe(400);
        expect(res.body.error).toBe('invalid_redirect_uri');
        expect(res.body.error_description).toMatch(/scheme/i);
      }
      // A refused update neither changes the client nor rotates its token.
      const after = await read(reg);
      expect(after.status).toBe(200);
      expect(after.body.redirect_uris).toEqual([REDIRECT]);
    },
  );

  it('RFC 7592 §2.2 + MCP security §Communication: a web client cannot switch to an http non-loopback redirect', async () => {
    const web = { application_type: 'web', redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' };
    const reg = await register(web);
    const refused = await update(reg, nativeMetadata({ ...web, redirect_uris: ['http://app.example/cb'] }));
    expectOAuthError(refused, 'invalid_redirect_uri', 400);
    // an https redirect is a valid update for the same client
    const ok = await update(reg, nativeMetadata({ ...web, redirect_uris: ['https://app.example/cb2'] }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.redirect_uris).toEqual(['https://app.example/cb2']);
  });

  it('RFC 7592 §2.2 + MCP client-registration §application_type: a native client cannot switch to http on a non-loopback host', async () => {
    const reg = await register();
    const res = await update(reg, nativeMetadata({ redirect_uris: ['http://app.example/cb'] }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/invalid_redirect_uri|invalid_client_metadata/);
  });

  it('RFC 7592 §2.2 + oidc-provider defaults application_type to web, and only native clients get any-port loopback: an update omitting application_type with loopback redirects stays native', async () => {
    const reg = await register();
    const { application_type: _type, ...withoutType } = nativeMetadata();
    const res = await update(reg, { ...withoutType, redirect_uris: ['http://127.0.0.1/callback'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.application_type).toBe('native');
  });

  it('RFC 7592 §2.2: a DCR client cannot add the client_credentials grant by update (pre-registered clients only)', async () => {
    const web = { application_type: 'web', redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' };
    const reg = await register(web);
    const res = await update(
      reg,
      nativeMetadata({ ...web, client_secret: reg.client_secret, grant_types: ['authorization_code', 'client_credentials'] }),
    );
    expectOAuthError(res, 'invalid_client_metadata', 400);
    expect((await read(reg)).body.grant_types).toEqual(['authorization_code', 'refresh_token']);
  });

  it('RFC 7592 §2.2 + RFC 7591 §3.2.2: unknown scopes are refused on update, resource scopes accepted', async () => {
    const reg = await register();
    const refused = await update(reg, nativeMetadata({ scope: 'admin:everything' }));
    expectOAuthError(refused, 'invalid_client_metadata', 400);
    const ok = await update(reg, nativeMetadata({ scope: 'notes:read' }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('RFC 7592 §2.2: a confidential client keeps its secret and its expiry; a wrong client_secret in the body is refused', async () => {
    const web = { application_type: 'web', redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' };
    const reg = await register(web);
    expect(reg.client_secret).toBeTypeOf('string');
    const wrong = await update(reg, nativeMetadata({ ...web, client_secret: 'not-the-secret' }));
    expectOAuthError(wrong, 'invalid_request', 400);
    expect(JSON.stringify(wrong.body)).not.toContain(reg.client_secret);
    const ok = await update(reg, nativeMetadata({ ...web, client_secret: reg.client_secret, client_name: 'Still Confidential' }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.client_secret).toBe(reg.client_secret);
    expect(ok.body.client_secret_expires_at).toBe(reg.client_secret_expires_at);
  });

  it('RFC 7592 §2.2 + RFC 7591 §3.2.1: a public client that becomes confidential by update gets a secret that expires', async () => {
    const reg = await register({ application_type: 'web', redirect_uris: ['https://app.example/cb'] });
    expect(reg.client_secret).toBeUndefined();
    const res = await update(
      reg,
      nativeMetadata({
        application_type: 'web',
        redirect_uris: ['https://app.example/cb'],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.client_secret).toBeTypeOf('string');
    const now = Math.floor(Date.now() / 1000);
    expect(res.body.client_secret_expires_at).toBeGreaterThan(now + 29 * 24 * 3600);
    expect(res.body.client_secret_expires_at).toBeLessThanOrEqual(now + 30 * 24 * 3600 + 5);
  });

  it.each(['registration_access_token', 'registration_client_uri', 'client_secret_expires_at', 'client_id_issued_at'])(
    'RFC 7592 §2.2: an update carrying the server-managed field %s is refused with invalid_request',
    async (field) => {
      const reg = await register();
      const res = await update(reg, nativeMetadata({ [field]: field.endsWith('_at') ? 0 : 'x' }));
      expectOAuthError(res, 'invalid_request', 400);
    },
  );

  it('RFC 7592 §2.2: an update whose client_id differs from the registration is refused', async () => {
    const reg = await register();
    const res = await update(reg, nativeMetadata({ client_id: 'someone-else' }));
    expectOAuthError(res, 'invalid_request', 400);
  });

  it('RFC 7592 §3 / RFC 6750 §3.1: a missing or wrong registration access token → 401 invalid_token, client unchanged', async () => {
    const reg = await register();
    const missing = await update(reg, nativeMetadata({ client_name: 'Hijacked' }), null);
    expectOAuthError(missing, 'invalid_token', 401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await update(reg, nativeMetadata({ client_name: 'Hijacked' }), 'not-a-registration-access-token');
    expectOAuthError(wrong, 'invalid_token', 401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/invalid_token/);
    expect((await read(reg)).body.client_name).toBe('Test Client');
  });

  it("RFC 7592 §3: another client's registration access token cannot update this client", async () => {
    const victim = await register();
    const attacker = await register();
    const res = await update(
      victim,
      nativeMetadata({ client_name: 'Hijacked', redirect_uris: ['http://127.0.0.1:6666/steal'] }),
      attacker.registration_access_token,
    );
    expectOAuthError(res, 'invalid_token', 401);
    const after = await read(victim);
    expect(after.body.client_name).toBe('Test Client');
    expect(after.body.redirect_uris).toEqual([REDIRECT]);
  });
});
