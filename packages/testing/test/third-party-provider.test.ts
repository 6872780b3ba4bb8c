/**
 * The loopback third-party provider (issue 41): the OAuth rules it enforces, tried and refused
 * over real HTTP — RFC 6749 (authorization code, client authentication, exact redirect URIs,
 * single-use codes, refresh), RFC 7636 (PKCE S256), RFC 9207 (`iss`), RFC 7009 (revocation),
 * RFC 6750 (bearer API), RFC 8414 (metadata).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPkcePair, HeadlessBrowser, startThirdPartyProvider, type ThirdPartyProvider } from '@mcp-auth-kit/testing';
import {
  authorizationCode,
  formOf,
  page,
  postAs,
  redeemCode,
  redirect,
  registerClientUnderTest,
  signInAndDecide,
  startAuthorization,
  type ClientUnderTest,
} from './helpers/provider-client.js';

const REDIRECT = 'http://127.0.0.1:1/connect/callback';

async function api(provider: ThirdPartyProvider, path: string, token?: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${provider.apiBase}${path}`, { headers: { ...(token && { authorization: `Bearer ${token}` }), ...headers } });
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: (await res.json()) as Record<string, unknown> };
}

describe('startThirdPartyProvider', () => {
  let provider: ThirdPartyProvider;
  let client: ClientUnderTest;
  let other: ClientUnderTest;

  beforeAll(async () => {
    provider = await startThirdPartyProvider({
      users: [
        {
          username: 'alice',
          password: 'alice-drive-pw',
          files: [
            { name: 'plan.md', content: 'hello' },
            { id: 'x', name: '<b>.txt' },
          ],
        },
        'bob',
      ],
      scopes: ['files.read', 'profile'],
    });
    client = registerClientUnderTest(provider, 'vault', REDIRECT, { name: 'Our <AS>' });
    other = registerClientUnderTest(provider, 'other', 'http://127.0.0.1:2/cb', { clientSecret: 'other-secret' });
  });
  afterAll(() => provider?.close());

  const tokensFor = async (username = 'alice', params: Record<string, string | undefined> = {}) => {
    const res = await redeemCode(provider, client, await authorizationCode(provider, client, username, params));
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string; scope: string; expires_in: number };
  };

  describe('RFC 8414 metadata', () => {
    it('names its own issuer and endpoints, S256 only, and RFC 9207 support', async () => {
      const res = await fetch(`${provider.issuer}/.well-known/oauth-authorization-server`);
      expect(res.status).toBe(200);
      const metadata = await res.json();
      expect(metadata).toEqual(provider.metadata);
      expect(metadata).toMatchObject({
        issuer: provider.issuer,
        authorization_endpoint: `${provider.issuer}/authorize`,
        token_endpoint: `${provider.issuer}/token`,
        revocation_endpoint: `${provider.issuer}/revoke`,
        code_challenge_methods_supported: ['S256'],
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: ['files.read', 'profile'],
        authorization_response_iss_parameter_supported: true,
      });
      expect(provider.issuer).toBe(`http://127.0.0.1:${provider.port}`);
    });
  });

  describe('authorization code flow (RFC 6749 §4.1, RFC 7636, RFC 9207)', () => {
    it('sign-in, consent, then a redirect with code, the same state and iss; the token works at the API', async () => {
      const attempt = await startAuthorization(provider, client);
      const signIn = page(attempt.first);
      expect(signIn.status).toBe(200);
      expect(formOf(signIn.body).fieldNames).toEqual(expect.arrayContaining(['transaction', 'csrf', 'username', 'password']));
      const consent = page(
        await attempt.browser.submit(signIn, { username: 'alice', password: 'alice-drive-pw', action: 'signin' }, REDIRECT),
      );
      expect(consent.status).toBe(200);
      // The client's name and the redirect host are shown, escaped.
      expect(consent.body).toContain('Our &lt;AS&gt;');
      expect(consent.body).not.toContain('Our <AS>');
      expect(consent.body).toContain('127.0.0.1:1');
      const callback = redirect(await attempt.browser.submit(consent, { action: 'approve' }, REDIRECT));
      expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT);
      expect(callback.searchParams.get('state')).toBe(attempt.state);
      expect(callback.searchParams.get('iss')).toBe(provider.issuer);
      const code = callback.searchParams.get('code')!;
      expect(code).toMatch(/^[\w-]{43}$/);

      const res = await redeemCode(provider, client, { code, verifier: attempt.verifier });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'files.read' });
      const files = await api(provider, '/files', res.body.access_token as string);
      expect(files).toMatchObject({
        status: 200,
        body: {
          files: [
            { id: 'f1', name: 'plan.md', size: 5 },
            { id: 'x', name: '<b>.txt', size: 0 },
          ],
        },
      });
      const who = await api(provider, '/whoami', res.body.access_token as string);
      expect(who.body).toEqual({ sub: 'alice', client_id: 'vault', scope: 'files.read' });
      expect(provider.grants('alice')).toContainEqual({ username: 'alice', clientId: 'vault', scopes: ['files.read'] });
    });

    it('each user sees only their own files', async () => {
      const { access_token } = await tokensFor('bob');
      expect((await api(provider, '/files', access_token)).body).toEqual({ files: [{ id: 'f1', name: 'bob-notes.txt', size: 12 }] });
    });

    it('client_secret_post authenticates too; both methods at once is invalid_request (RFC 6749 §2.3)', async () => {
      const { code, verifier } = await authorizationCode(provider, client, 'alice');
      const params = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT };
      const both = await postAs(provider.metadata.token_endpoint as string, client, params, 'both');
      expect(both).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
      const post = await postAs(provider.metadata.token_endpoint as string, client, params, 'post');
      expect(post.status).toBe(200);
    });

    it('a wrong or missing client secret is 401 invalid_client, with a Basic challenge when Basic was tried (§5.2)', async () => {
      const params = { grant_type: 'refresh_token', refresh_token: 'x' };
      const wrong = await postAs(provider.metadata.token_endpoint as string, client, params, { secret: 'nope' });
      expect(wrong).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic /);
      const none = await postAs(provider.metadata.token_endpoint as string, client, { ...params, client_id: client.clientId }, 'none');
      expect(none).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(none.headers.get('www-authenticate')).toBeNull();
      const missing = await postAs(provider.metadata.token_endpoint as string, client, {}, 'basic');
      expect(missing).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
      const garbled = await fetch(provider.metadata.token_endpoint as string, {
        method: 'POST',
        headers: { authorization: 'Basic bm8tY29sb24=', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&refresh_token=x',
      });
      expect(garbled.status).toBe(401);
      expect(await garbled.json()).toMatchObject({ error: 'invalid_client' });
      // Basic for one client, client_id in the body for another: two identities, refused.
      const mixed = await postAs(provider.metadata.token_endpoint as string, client, { ...params, client_id: 'other' }, 'basic');
      expect(mixed).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
      const unsupported = await postAs(provider.metadata.token_endpoint as string, client, { grant_type: 'password' }, 'basic');
      expect(unsupported).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
    });

    it('a wrong password shows the sign-in page again (401), the username escaped, and no code', async () => {
      const attempt = await startAuthorization(provider, client);
      const again = page(
        await attempt.browser.submit(page(attempt.first), { username: '<alice>', password: 'x', action: 'signin' }, REDIRECT),
      );
      expect(again.status).toBe(401);
      expect(again.body).toContain('Invalid username or password.');
      expect(again.body).toContain('value="&lt;alice&gt;"');
      expect(formOf(again.body).fieldNames).toContain('password');
    });

    it('deny: error=access_denied with state and iss (§4.1.2.1, RFC 9207 §2)', async () => {
      const attempt = await startAuthorization(provider, client);
      const callback = await signInAndDecide(attempt, client, { username: 'bob', password: provider.passwordOf('bob')! }, 'deny');
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('state')).toBe(attempt.state);
      expect(callback.searchParams.get('iss')).toBe(provider.issuer);
      expect(callback.searchParams.has('code')).toBe(false);
    });

    it('a browser that signed in goes straight to consent next time, under a new browser cookie (no session fixation)', async () => {
      const browser = new HeadlessBrowser();
      const first = await startAuthorization(provider, client, {}, browser);
      const before = await browser.jar.getCookieString(provider.issuer);
      await signInAndDecide(first, client, { username: 'alice', password: 'alice-drive-pw' });
      const after = await browser.jar.getCookieString(provider.issuer);
      expect(after).toMatch(/^tp_browser=/);
      expect(after).not.toBe(before);
      const second = await startAuthorization(provider, client, {}, browser);
      const consent = page(second.first);
      expect(consent.body).toContain('Signed in as <strong>alice</strong>');
      expect(formOf(consent.body).fieldNames).not.toContain('password');
    });
  });

  describe('PKCE (RFC 7636): S256 required', () => {
    it.each([
      ['no code_challenge', { code_challenge: undefined, code_challenge_method: undefined }],
      ['code_challenge_method=plain', { code_challenge_method: 'plain' }],
      ['no code_challenge_method', { code_challenge_method: undefined }],
      ['a challenge that is not S256 output', { code_challenge: 'short' }],
    ])('%s: error=invalid_request back to the client with state and iss', async (_name, params) => {
      const attempt = await startAuthorization(provider, client, params);
      const callback = redirect(attempt.first);
      expect(callback.searchParams.get('error')).toBe('invalid_request');
      expect(callback.searchParams.get('state')).toBe(attempt.state);
      expect(callback.searchParams.get('iss')).toBe(provider.issuer);
    });

    it('a wrong or missing verifier is invalid_grant, and the code is gone after that try', async () => {
      const { code, verifier } = await authorizationCode(provider, client, 'alice');
      const endpoint = provider.metadata.token_endpoint as string;
      const base = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT };
      const wrong = await postAs(endpoint, client, { ...base, code_verifier: createPkcePair().verifier });
      expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      const right = await postAs(endpoint, client, { ...base, code_verifier: verifier });
      expect(right).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

      const fresh = await authorizationCode(provider, client, 'alice');
      const missing = await postAs(endpoint, client, { grant_type: 'authorization_code', code: fresh.code, redirect_uri: REDIRECT });
      expect(missing).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });
  });

  describe('authorization codes: single-use, bound to the client and redirect URI', () => {
    it('a replayed code is invalid_grant and revokes the tokens the first redemption got (RFC 6749 §4.1.2)', async () => {
      const { code, verifier } = await authorizationCode(provider, client, 'alice');
      const params = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT };
      const first = await postAs(provider.metadata.token_endpoint as string, client, params);
      expect(first.status).toBe(200);
      expect((await api(provider, '/files', first.body.access_token as string)).status).toBe(200);
      const replay = await postAs(provider.metadata.token_endpoint as string, client, params);
      expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect((await api(provider, '/files', first.body.access_token as string)).status).toBe(401);
    });

    it('a code issued to one client is invalid_grant for another', async () => {
      const res = await redeemCode(provider, client, await authorizationCode(provider, client, 'alice'), other);
      expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });

    it('the token request must repeat the redirect_uri of the authorization request (§4.1.3)', async () => {
      const endpoint = provider.metadata.token_endpoint as string;
      const a = await authorizationCode(provider, client, 'alice');
      const omitted = await postAs(endpoint, client, { grant_type: 'authorization_code', code: a.code, code_verifier: a.verifier });
      expect(omitted).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      const b = await authorizationCode(provider, client, 'alice');
      const changed = await postAs(endpoint, client, {
        grant_type: 'authorization_code',
        code: b.code,
        code_verifier: b.verifier,
        redirect_uri: `${REDIRECT}/`,
      });
      expect(changed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      // Without redirect_uri in the authorization request (one registered URI), none is needed.
      const c = await authorizationCode(provider, client, 'alice', { redirect_uri: undefined });
      const plain = await postAs(endpoint, client, { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier });
      expect(plain.status).toBe(200);
    });
  });

  describe('redirect URIs: exact match, no redirect when they do not (RFC 6749 §3.1.2.2, §4.1.2.1)', () => {
    it.each([
      ['an unregistered URI', 'http://127.0.0.1:9/evil'],
      ['a trailing slash', `${REDIRECT}/`],
      ['an extra query', `${REDIRECT}?x=1`],
      ['another port', REDIRECT.replace(':1/', ':11/')],
      ['another letter case', REDIRECT.replace('callback', 'Callback')],
    ])('%s: an error page (400), never a redirect', async (_name, redirectUri) => {
      const attempt = await startAuthorization(provider, client, { redirect_uri: redirectUri });
      const shown = page(attempt.first);
      expect(shown.status).toBe(400);
      expect(shown.headers.get('location')).toBeNull();
      expect(shown.body).toContain('redirect URI');
    });

    it('an unknown client: an error page, never a redirect', async () => {
      const attempt = await startAuthorization(provider, { ...client, clientId: 'nobody' });
      const shown = page(attempt.first);
      expect(shown.status).toBe(400);
      expect(shown.headers.get('location')).toBeNull();
    });

    it('an unknown scope or response type goes back to the client as an error', async () => {
      const scope = redirect((await startAuthorization(provider, client, { scope: 'files.write' })).first);
      expect(scope.searchParams.get('error')).toBe('invalid_scope');
      const type = redirect((await startAuthorization(provider, client, { response_type: 'token' })).first);
      expect(type.searchParams.get('error')).toBe('unsupported_response_type');
    });
  });

  describe('the forms are CSRF-protected and single-use', () => {
    it('a post without the CSRF token, or from another browser, is refused (403) and signs nobody in', async () => {
      const attempt = await startAuthorization(provider, client);
      const form = formOf(page(attempt.first).body);
      const fields = { username: 'alice', password: 'alice-drive-pw', action: 'signin' };
      const action = new URL(form.action, provider.issuer).href;
      const post = (browser: HeadlessBrowser, body: Record<string, string>) =>
        browser.request(action, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(body),
        });
      expect((await post(attempt.browser, { ...fields, transaction: form.hidden.transaction! })).status).toBe(403);
      expect((await post(attempt.browser, { ...fields, ...form.hidden, csrf: 'guess' })).status).toBe(403);
      // An attacker's page posting with the victim's form values but its own browser.
      expect((await post(new HeadlessBrowser(), { ...fields, ...form.hidden })).status).toBe(403);
      // The real form still works afterwards.
      expect((await post(attempt.browser, { ...fields, ...form.hidden })).status).toBe(200);
    });

    it('a consent form cannot be posted twice: the second approval gets no second code', async () => {
      const attempt = await startAuthorization(provider, client);
      const consent = page(
        await attempt.browser.submit(page(attempt.first), { username: 'alice', password: 'alice-drive-pw', action: 'signin' }, REDIRECT),
      );
      redirect(await attempt.browser.submit(consent, { action: 'approve' }, REDIRECT));
      const again = page(await attempt.browser.submit(consent, { action: 'approve' }, REDIRECT));
      expect(again.status).toBe(403);
    });

    it('pages forbid framing and scripts; the consent page may post on to the client only', async () => {
      const attempt = await startAuthorization(provider, client);
      const signIn = page(attempt.first);
      expect(signIn.headers.get('x-frame-options')).toBe('DENY');
      expect(signIn.headers.get('cache-control')).toBe('no-store');
      const csp = signIn.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("form-action 'self';");
      const consent = page(
        await attempt.browser.submit(signIn, { username: 'alice', password: 'alice-drive-pw', action: 'signin' }, REDIRECT),
      );
      expect(consent.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:1;");
    });
  });

  describe('refresh tokens rotate; a replayed one revokes the grant (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2)', () => {
    it('rotation, narrowing, no widening, and reuse detection', async () => {
      const endpoint = provider.metadata.token_endpoint as string;
      const first = await tokensFor('alice', { scope: 'files.read profile' });
      const second = await postAs(endpoint, client, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
      expect(second.status).toBe(200);
      expect(second.body.refresh_token).not.toBe(first.refresh_token);
      expect(second.body.access_token).not.toBe(first.access_token);
      expect(second.body.scope).toBe('files.read profile');
      const narrowed = await postAs(endpoint, client, {
        grant_type: 'refresh_token',
        refresh_token: second.body.refresh_token as string,
        scope: 'profile',
      });
      expect(narrowed).toMatchObject({ status: 200, body: { scope: 'profile' } });
      expect((await api(provider, '/files', narrowed.body.access_token as string)).status).toBe(403);
      // The grant's scopes stay available to later refreshes; nothing beyond them.
      const back = await postAs(endpoint, client, {
        grant_type: 'refresh_token',
        refresh_token: narrowed.body.refresh_token as string,
        scope: 'files.read',
      });
      expect(back).toMatchObject({ status: 200, body: { scope: 'files.read' } });
      const wider = await postAs(endpoint, client, {
        grant_type: 'refresh_token',
        refresh_token: back.body.refresh_token as string,
        scope: 'files.read admin',
      });
      expect(wider).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });

      // Replaying a spent refresh token ends the grant: the newest tokens stop working too.
      const replay = await postAs(endpoint, client, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
      expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect((await api(provider, '/whoami', back.body.access_token as string)).status).toBe(401);
      const latest = await postAs(endpoint, client, { grant_type: 'refresh_token', refresh_token: back.body.refresh_token as string });
      expect(latest).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });

    it("another client cannot use a client's refresh token", async () => {
      const { refresh_token } = await tokensFor('bob');
      const res = await postAs(provider.metadata.token_endpoint as string, other, { grant_type: 'refresh_token', refresh_token });
      expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });
  });

  describe('revocation (RFC 7009)', () => {
    it('an access token alone; a refresh token with its grant; unknown tokens answer 200', async () => {
      const endpoint = provider.metadata.revocation_endpoint as string;
      const a = await tokensFor('alice');
      expect((await postAs(endpoint, client, { token: a.access_token, token_type_hint: 'access_token' })).status).toBe(200);
      expect((await api(provider, '/whoami', a.access_token)).status).toBe(401);
      const refreshed = await postAs(provider.metadata.token_endpoint as string, client, {
        grant_type: 'refresh_token',
        refresh_token: a.refresh_token,
      });
      expect(refreshed.status).toBe(200);

      expect((await postAs(endpoint, client, { token: refreshed.body.refresh_token as string })).status).toBe(200);
      expect((await api(provider, '/whoami', refreshed.body.access_token as string)).status).toBe(401);
      expect((await postAs(endpoint, client, { token: 'never-issued' })).status).toBe(200);
    });

    it("another client's token is refused and stays valid; no client authentication is invalid_client", async () => {
      const endpoint = provider.metadata.revocation_endpoint as string;
      const { access_token } = await tokensFor('bob');
      expect(await postAs(endpoint, other, { token: access_token })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
      expect((await api(provider, '/whoami', access_token)).status).toBe(200);
      expect(await postAs(endpoint, client, { token: access_token, client_id: client.clientId }, 'none')).toMatchObject({
        status: 401,
        body: { error: 'invalid_client' },
      });
      expect(await postAs(endpoint, client, {}, 'basic')).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    });

    it('revokeGrants(username) ends every grant of that user, and only theirs', async () => {
      const alice = await tokensFor('alice');
      const bob = await tokensFor('bob');
      expect(provider.revokeGrants('alice')).toBeGreaterThan(0);
      expect(provider.grants('alice')).toEqual([]);
      expect((await api(provider, '/files', alice.access_token)).status).toBe(401);
      const refresh = await postAs(provider.metadata.token_endpoint as string, client, {
        grant_type: 'refresh_token',
        refresh_token: alice.refresh_token,
      });
      expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect((await api(provider, '/files', bob.access_token)).status).toBe(200);
    });
  });

  describe('API bearer checks (RFC 6750)', () => {
    it('no token: 401 with a challenge without error (§3.1); a token in the query does not count (§2.3 not supported)', async () => {
      const none = await api(provider, '/files');
      expect(none.status).toBe(401);
      expect(none.challenge).toBe('Bearer realm="Drive"');
      const { access_token } = await tokensFor('alice');
      const query = await fetch(`${provider.apiBase}/files?access_token=${access_token}`);
      expect(query.status).toBe(401);
    });

    it('malformed: 400 invalid_request; unknown: 401 invalid_token; without files.read: 403 insufficient_scope', async () => {
      const malformed = await api(provider, '/files', 'a b');
      expect(malformed.status).toBe(400);
      expect(malformed.challenge).toContain('error="invalid_request"');
      const unknown = await api(provider, '/files', 'not-a-token');
      expect(unknown.status).toBe(401);
      expect(unknown.challenge).toContain('error="invalid_token"');
      const { access_token } = await tokensFor('alice', { scope: 'profile' });
      const scoped = await api(provider, '/files', access_token);
      expect(scoped.status).toBe(403);
      expect(scoped.challenge).toBe(
        'Bearer realm="Drive", error="insufficient_scope", error_description="needs files.read", scope="files.read"',
      );
      expect((await api(provider, '/whoami', access_token)).body).toMatchObject({ sub: 'alice', scope: 'profile' });
    });
  });

  describe('the request log', () => {
    it('records every request as it arrived; requestsContaining finds a value in URL, headers or body', async () => {
      const { access_token } = await tokensFor('alice');
      const marker = 'mcp-token-that-must-not-travel';
      expect(provider.requestsContaining(marker)).toEqual([]);
      await api(provider, '/whoami', access_token, { 'x-probe': marker });
      const found = provider.requestsContaining(marker);
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({
        method: 'GET',
        url: '/api/whoami',
        headers: { 'x-probe': marker, authorization: `Bearer ${access_token}` },
      });
      await fetch(`${provider.issuer}/revoke`, { method: 'POST', body: new URLSearchParams({ token: `${marker}+/=` }) });
      expect(provider.requestsContaining(`${marker}+/=`).map((r) => r.url)).toEqual(['/revoke']);
      expect(provider.requests.at(-1)?.body).toBe(`token=${encodeURIComponent(`${marker}+/=`)}`);
      expect(provider.requestsContaining('')).toEqual([]);
    });
  });
});

describe('startThirdPartyProvider options', () => {
  const user = { username: 'carol', password: 'carol-pw' };
  async function withProvider(
    options: Parameters<typeof startThirdPartyProvider>[0],
    run: (p: ThirdPartyProvider, c: ClientUnderTest) => Promise<void>,
  ) {
    const provider = await startThirdPartyProvider(options);
    try {
      await run(provider, registerClientUnderTest(provider, 'vault', REDIRECT));
    } finally {
      await provider.close();
    }
  }

  it.each([
    ['omit', true, null],
    ['unadvertised', false, null],
    [{ wrong: 'http://127.0.0.1:7/other' }, true, 'http://127.0.0.1:7/other'],
  ] as const)('responseIss %j: metadata says %s, iss is %s (RFC 9207 cases for client tests)', async (responseIss, advertised, iss) => {
    await withProvider({ users: [user], responseIss }, async (provider, client) => {
      expect(provider.metadata.authorization_response_iss_parameter_supported).toBe(advertised);
      const attempt = await startAuthorization(provider, client);
      const callback = await signInAndDecide(attempt, client, user);
      expect(callback.searchParams.get('code')).toBeTruthy();
      expect(callback.searchParams.get('iss')).toBe(iss);
    });
  });

  it('accessTokenLifetime: a short-lived token expires at the API (401 invalid_token) and refreshing gets a new one', async () => {
    await withProvider({ users: [user], accessTokenLifetime: 1, hostname: 'localhost' }, async (provider, client) => {
      expect(provider.issuer).toBe(`http://localhost:${provider.port}`);
      const tokens = await redeemCode(provider, client, await authorizationCode(provider, client, 'carol'));
      expect(tokens.body.expires_in).toBe(1);
      await new Promise((r) => setTimeout(r, 1100));
      const expired = await api(provider, '/files', tokens.body.access_token as string);
      expect(expired.status).toBe(401);
      expect(expired.challenge).toContain('error="invalid_token"');
      const refreshed = await postAs(provider.metadata.token_endpoint as string, client, {
        grant_type: 'refresh_token',
        refresh_token: tokens.body.refresh_token as string,
      });
      expect((await api(provider, '/files', refreshed.body.access_token as string)).status).toBe(200);
    });
  });

  it('codeLifetime: an expired code is invalid_grant', async () => {
    await withProvider({ users: [user], codeLifetime: 1 }, async (provider, client) => {
      const grant = await authorizationCode(provider, client, 'carol');
      await new Promise((r) => setTimeout(r, 1100));
      const res = await redeemCode(provider, client, grant);
      expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });
  });

  it('registerClient replaces a client of the same id (a new redirect URI, a given secret)', async () => {
    await withProvider({ users: [user] }, async (provider, client) => {
      const moved = 'http://127.0.0.1:3/connect/callback';
      const replaced = provider.registerClient({ clientId: 'vault', clientSecret: 'fixed-secret', redirectUris: [moved] });
      expect(replaced).toEqual({ clientId: 'vault', clientSecret: 'fixed-secret', redirectUris: [moved] });
      expect(page((await startAuthorization(provider, client)).first).status).toBe(400);
      const attempt = await startAuthorization(provider, { ...client, redirectUri: moved });
      expect(page(attempt.first).status).toBe(200);
    });
  });

  it('a fixed port, and users given by name get a generated password', async () => {
    const first = await startThirdPartyProvider({ users: ['dave'] });
    const port = first.port;
    await first.close();
    const provider = await startThirdPartyProvider({ users: ['dave'], port });
    try {
      expect(provider.port).toBe(port);
      expect(provider.passwordOf('dave')).toMatch(/^[\w-]{20,}$/);
      expect(provider.passwordOf('nobody')).toBeUndefined();
    } finally {
      await provider.close();
    }
  });
});
