import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIRECT, registerClient, startAs, type RunningAs } from './helpers/as.js';
import { authorizeAuto } from './helpers/flow.js';

describe('RFC 7591 dynamic client registration with MCP rules', () => {
  let t: RunningAs;
  beforeAll(async () => {
    t = await startAs({ devAutoLogin: 'alice', registration: { rateLimit: { max: 1000, windowSeconds: 60 } } });
  });
  afterAll(() => t.close());

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
    expect(reg.status).toBe(400);
    expect(reg.body.error).toBe('invalid_redirect_uri');
  });

  it('MCP client-registration §application_type: native + http on a non-loopback host is refused', async () => {
    const reg = await registerClient(t.url, { redirect_uris: ['http://app.example/cb'] });
    expect(reg.status).toBe(400);
    expect(reg.body.error).toMatch(/invalid_redirect_uri|invalid_client_metadata/);
  });

  it('MCP security §Communication: a web client with an http non-loopback redirect is refused', async () => {
    const reg = await registerClient(t.url, { application_type: 'web', redirect_uris: ['http://app.example/cb'] });
    expect(reg.status).toBe(400);
    expect(reg.body.error).toBe('invalid_redirect_uri');
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

  it('NOTES gotcha 2: omitted application_type with loopback redirects is treated as native (any-port loopback)', async () => {
    const reg = await registerClient(t.url, { application_type: undefined, redirect_uris: ['http://127.0.0.1/callback'] });
    expect(reg.status).toBe(201);
    expect(reg.body.application_type).toBe('native');
    const flow = await authorizeAuto(t.url, reg.body.client_id, { redirect_uri: 'http://127.0.0.1:7777/callback' });
    expect(flow.callback.searchParams.get('code')).toBeTruthy();
  });

  it('MCP security §exact redirect matching: a web client gets no port flexibility', async () => {
    const reg = await registerClient(t.url, { application_type: 'web', redirect_uris: ['http://127.0.0.1:7777/callback'] });
    expect(reg.status).toBe(201);
    await expect(authorizeAuto(t.url, reg.body.client_id, { redirect_uri: 'http://127.0.0.1:7778/callback' })).rejects.toThrow(/flow stopped/);
  });

  it('RFC 7591 §3.2.1: confidential DCR clients get a secret that expires', async () => {
    const reg = await registerClient(t.url, { application_type: 'web', redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' });
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
    expect(reg.status).toBe(400);
    expect(reg.body.error).toBe('invalid_client_metadata');
  });

  it('RFC 7591 §2: unknown metadata members (e.g. a `resource` member) are ignored, not fatal', async () => {
    const reg = await registerClient(t.url, { resource: 'http://127.0.0.1:3999/mcp', software_id: 'x', some_vendor_field: true });
    expect(reg.status).toBe(201);
    expect(reg.body.some_vendor_field).toBeUndefined();
  });

  it('NOTES gotcha 3: resource scopes in DCR `scope` are accepted', async () => {
    const reg = await registerClient(t.url, { scope: 'notes:read' });
    expect(reg.status).toBe(201);
  });

  it('RFC 7591 §3.2.2: unknown scopes are refused with invalid_client_metadata', async () => {
    const reg = await registerClient(t.url, { scope: 'admin:everything' });
    expect(reg.status).toBe(400);
    expect(reg.body.error).toBe('invalid_client_metadata');
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
  beforeAll(async () => {
    t = await startAs({
      devAutoLogin: 'alice',
      clients: [{ client_id: 'desktop', client_name: 'Desktop', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' }],
    });
  });
  afterAll(() => t.close());

  it('RFC 8252 §7.3: a configured loopback-only client without application_type is native (any port)', async () => {
    const flow = await authorizeAuto(t.url, 'desktop', { redirect_uri: REDIRECT });
    expect(flow.callback.searchParams.get('code')).toBeTruthy();
  });
});

describe('DCR rate limit and initial access token', () => {
  let t: RunningAs;
  const iat = 'initial-access-token-0123456789';
  beforeAll(async () => {
    t = await startAs({ registration: { rateLimit: { max: 2, windowSeconds: 60 }, initialAccessToken: iat } });
  });
  afterAll(() => t.close());

  it('RFC 7591 §3: with an initial access token configured, registration without it is refused', async () => {
    const reg = await registerClient(t.url);
    expect(reg.status).toBe(401);
    expect(reg.body.error).toBe('invalid_token');
  });

  it('RFC 7591 §3 + abuse protection: registrations per address are rate limited (429)', async () => {
    // The refused request above already counted once.
    const ok = await registerClient(t.url, {}, { authorization: `Bearer ${iat}` });
    expect(ok.status).toBe(201);
    const limited = await registerClient(t.url, {}, { authorization: `Bearer ${iat}` });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('invalid_request');
  });
});
