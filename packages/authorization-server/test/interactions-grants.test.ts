import { describe, expect, it } from 'vitest';
import { addAccount, REDIRECT, registerClient, RESOURCE, type RunningAs } from './helpers/as.js';
import { listAccountGrants, revokeRememberedGrant } from '../src/interactions/remembered-grants.js';
import { type BrowserPage, HeadlessBrowser, isUrl, expectOAuthError } from '@mcp-auth-kit/test-utils';
import { exchangeCode, openAuthorization, refreshWith } from './helpers/flow.js';
import { startAsForDescribe } from './helpers/for-describe.js';

const OTHER_RESOURCE = 'http://127.0.0.1:3998/files';
/** Web clients (https redirect URI): remembered approvals skip the page for them. */
const WEB_REDIRECT = 'https://app.example/cb';

/**
 * Grants remembered per user, client and resource (MCP security best practices §consent: a
 * user approves a client once; anything more, or after revocation, is asked again).
 */
describe('remembered grants', () => {
  let t: RunningAs;
  startAsForDescribe(
    {
      resources: [
        { resource: RESOURCE, scopes: { 'notes:read': 'Read your notes', 'notes:write': 'Change your notes' } },
        { resource: OTHER_RESOURCE, scopes: { 'files:read': 'Read your files' } },
      ],
    },
    (started) => (t = started),
  );

  const webClient = (metadata: Record<string, unknown> = {}) =>
    registerClient(t.url, { application_type: 'web', redirect_uris: [WEB_REDIRECT], ...metadata });

  /** In `ua`: authorize (state 's'), log in as `username` (password `<username>-password`); returns the page after the login. */
  async function signIn(
    ua: HeadlessBrowser,
    clientId: string,
    {
      scope = 'notes:read',
      resource = RESOURCE,
      redirect = WEB_REDIRECT,
      prompt = undefined as string | undefined,
      username = 'alice',
    } = {},
  ) {
    const { page: login, verifier } = await openAuthorization(
      t.url,
      { client_id: clientId, redirect_uri: redirect, scope, resource, state: 's', prompt },
      ua,
    );
    if (isUrl(login)) throw new Error('expected the login page');
    const next = await ua.submit(login, { username, password: `${username}-password`, action: 'login' }, redirect);
    return { ua, next, verifier };
  }

  /** A fresh browser (new session): authorize, log in; returns the consent page or the final redirect. */
  const freshSession = (clientId: string, scope: string, resource = RESOURCE) =>
    signIn(new HeadlessBrowser(), clientId, { scope, resource });

  async function approve(ua: HeadlessBrowser, consent: URL | BrowserPage): Promise<URL> {
    if (isUrl(consent)) throw new Error(`expected consent, got ${consent.href}`);
    const done = await ua.submit(consent, { action: 'approve' }, WEB_REDIRECT);
    if (!isUrl(done)) throw new Error('expected the redirect');
    return done;
  }

  it('approved once, a new browser session for the same user and client gets a code without the consent page', async () => {
    const clientId = (await webClient()).body.client_id;
    const first = await freshSession(clientId, 'notes:read');
    await approve(first.ua, first.next);
    const second = await freshSession(clientId, 'notes:read');
    expect(isUrl(second.next)).toBe(true);
    const token = await exchangeCode(
      t.url,
      clientId,
      { callback: second.next as URL, verifier: second.verifier },
      { redirect_uri: WEB_REDIRECT },
    );
    expect(token.status).toBe(200);
    expect(token.body.scope).toBe('notes:read');
  });

  it('MCP security §Localhost Redirect URI Risks: a native (loopback) client is asked every time, showing what was allowed before', async () => {
    const clientId = (await registerClient(t.url)).body.client_id;
    const session = () => signIn(new HeadlessBrowser(), clientId, { redirect: REDIRECT });
    const first = await session();
    if (isUrl(first.next)) throw new Error('expected consent');
    expect(first.next.body).not.toContain('You allowed this access before');
    expect(isUrl(await first.ua.submit(first.next, { action: 'approve' }, REDIRECT))).toBe(true);
    const second = await session();
    if (isUrl(second.next)) throw new Error('a loopback client must not get a code without the page');
    expect(second.next.body).toContain('You allowed this access before');
    expect(second.next.body).toContain('Read your notes');
    const done = await second.ua.submit(second.next, { action: 'approve' }, REDIRECT);
    expect(isUrl(done) && done.searchParams.get('code')).toBeTruthy();
  });

  it('OIDC Core §3.1.2.1 prompt=consent: the page is shown even when everything was approved before', async () => {
    const clientId = (await webClient()).body.client_id;
    const first = await freshSession(clientId, 'notes:read');
    await approve(first.ua, first.next);
    const { next } = await signIn(new HeadlessBrowser(), clientId, { prompt: 'consent' });
    expect(!isUrl(next) && next.body).toContain('You allowed this access before');
  });

  it('MCP step-up: a wider scope in a later session asks again, for the new scope only', async () => {
    const clientId = (await webClient()).body.client_id;
    const first = await freshSession(clientId, 'notes:read');
    await approve(first.ua, first.next);
    const wider = await freshSession(clientId, 'notes:read notes:write');
    if (isUrl(wider.next)) throw new Error('wider scopes must be asked again');
    const asked = /New permissions<\/dt><dd>([\s\S]*?)<\/dd>/.exec(wider.next.body)?.[1] ?? '';
    expect(asked).toContain('Change your notes');
    expect(asked).not.toContain('Read your notes');
    expect(wider.next.body).toMatch(/Already allowed[\s\S]*Read your notes[\s\S]*notes:read/);
    const done = await approve(wider.ua, wider.next);
    const token = await exchangeCode(t.url, clientId, { callback: done, verifier: wider.verifier }, { redirect_uri: WEB_REDIRECT });
    expect(token.body.scope).toBe('notes:read notes:write');
  });

  it('RFC 8707: grants are per resource — another resource of the same client is asked for', async () => {
    const clientId = (await webClient({ scope: 'notes:read files:read' })).body.client_id;
    const first = await freshSession(clientId, 'notes:read');
    await approve(first.ua, first.next);
    const other = await freshSession(clientId, 'files:read', OTHER_RESOURCE);
    if (isUrl(other.next)) throw new Error('another resource must be asked for');
    expect(other.next.body).toContain(OTHER_RESOURCE);
    expect(other.next.body).toContain('Read your files');
  });

  it('grants are per client: another client of the same user is asked for', async () => {
    const a = (await webClient()).body.client_id;
    const b = (await webClient()).body.client_id;
    const first = await freshSession(a, 'notes:read');
    await approve(first.ua, first.next);
    const other = await freshSession(b, 'notes:read');
    expect(isUrl(other.next)).toBe(false);
  });

  it('revoked (operator command / account tools): listed, then revoked with its refresh token, then asked again', async () => {
    const clientId = (await webClient()).body.client_id;
    const first = await freshSession(clientId, 'notes:read notes:write');
    const done = await approve(first.ua, first.next);
    const token = await exchangeCode(t.url, clientId, { callback: done, verifier: first.verifier }, { redirect_uri: WEB_REDIRECT });
    expect(token.body.refresh_token).toBeTruthy();
    const alice = (await t.as.store.accounts.findByUsername('alice'))!;
    const listed = (await listAccountGrants(t.as.store, alice.id)).find((g) => g.clientId === clientId);
    expect(listed?.resources[RESOURCE]).toEqual(['notes:read', 'notes:write']);

    expect(await revokeRememberedGrant(t.as.store, alice.id, clientId)).toBe(true);
    expect((await listAccountGrants(t.as.store, alice.id)).some((g) => g.clientId === clientId)).toBe(false);
    const refresh = await refreshWith(t.url, clientId, token.body.refresh_token, { resource: undefined });
    expectOAuthError(refresh, 'invalid_grant', 400);
    // Same browser session (its grant is gone) and a new one: both see the consent page again.
    const { page: sameSession } = await openAuthorization(t.url, { client_id: clientId, redirect_uri: WEB_REDIRECT, state: 's' }, first.ua);
    expect(!isUrl(sameSession) && sameSession.body).toContain('Authorize access');
    const again = await freshSession(clientId, 'notes:read');
    expect(!isUrl(again.next) && again.next.body).toContain('Authorize access');
    // Approving again works and is remembered again.
    await approve(again.ua, again.next);
    expect((await listAccountGrants(t.as.store, alice.id)).some((g) => g.clientId === clientId)).toBe(true);
  });

  it('/account: the signed-in user lists their approvals and revokes one (CSRF-protected); tokens die, consent is asked again', async () => {
    const clientId = (await webClient({ client_name: 'Account Page Client' })).body.client_id;
    const first = await freshSession(clientId, 'notes:read notes:write');
    const done = await approve(first.ua, first.next);
    const token = await exchangeCode(t.url, clientId, { callback: done, verifier: first.verifier }, { redirect_uri: WEB_REDIRECT });
    const page = await first.ua.request(`${t.url}/account`);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(page.body).toContain('Account Page Client');
    expect(page.body).toContain(clientId);
    expect(page.body).toContain('Change your notes');

    // Without the form token: refused, nothing revoked.
    const forged = await first.ua.request(`${t.url}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'revoke', client_id: clientId }),
    });
    expect(forged.status).toBe(403);
    const alice = (await t.as.store.accounts.findByUsername('alice'))!;
    expect((await listAccountGrants(t.as.store, alice.id)).some((g) => g.clientId === clientId)).toBe(true);

    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const revoked = await first.ua.request(`${t.url}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, action: 'revoke', client_id: clientId }),
    });
    expect(revoked.status).toBe(303);
    expect((await listAccountGrants(t.as.store, alice.id)).some((g) => g.clientId === clientId)).toBe(false);
    const refresh = await refreshWith(t.url, clientId, token.body.refresh_token, { resource: undefined });
    expect(refresh.body.error).toBe('invalid_grant');
    const after = await first.ua.request(`${t.url}/account?revoked=1`);
    expect(after.body).toContain('Access revoked.');
    expect(after.body).not.toContain(clientId);
  });

  it('/account without a browser session: 401, no data; a user only ever revokes their own grants', async () => {
    const anonymous = await new HeadlessBrowser().request(`${t.url}/account`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toContain('not signed in');
    // Bob, signed in, posts alice's client_id: only his own (empty) grants are touched.
    await addAccount(t, 'bob-acc', 'bob');
    const clientId = (await webClient()).body.client_id;
    const alices = await freshSession(clientId, 'notes:read');
    await approve(alices.ua, alices.next);
    const bob = new HeadlessBrowser();
    const { next: bobsConsent } = await signIn(bob, clientId, { username: 'bob' });
    const empty = await bob.request(`${t.url}/account`);
    expect(empty.body).toContain('No application has access');
    // Bob approves the same client for himself: he now has a form (and a CSRF token).
    await approve(bob, bobsConsent);
    const page = await bob.request(`${t.url}/account`);
    // Bob revokes his own approval; alice's approval of the same client is untouched.
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const res = await bob.request(`${t.url}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, action: 'revoke', client_id: clientId }),
    });
    expect(res.status).toBe(303);
    expect(await listAccountGrants(t.as.store, 'bob-acc')).toEqual([]);
    const alice = (await t.as.store.accounts.findByUsername('alice'))!;
    expect((await listAccountGrants(t.as.store, alice.id)).some((g) => g.clientId === clientId)).toBe(true);
    // A client bob never approved: nothing to revoke.
    const again = await bob.request(`${t.url}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, action: 'revoke', client_id: clientId }),
    });
    expect(again.status).toBe(400);
  });

  it('two instances racing on the listing index lose nothing: the next lookup puts the entry back', async () => {
    const clientId = (await webClient()).body.client_id;
    const first = await freshSession(clientId, 'notes:read');
    await approve(first.ua, first.next);
    const alice = (await t.as.store.accounts.findByUsername('alice'))!;
    // What a lost read-modify-write of the index looks like.
    await t.as.store.kv.delete('account-grants', alice.id);
    expect(await listAccountGrants(t.as.store, alice.id)).toEqual([]);
    const second = await freshSession(clientId, 'notes:read');
    expect(isUrl(second.next)).toBe(true);
    expect((await listAccountGrants(t.as.store, alice.id)).some((g) => g.clientId === clientId)).toBe(true);
  });

  it('a denied request is not remembered as approval', async () => {
    const clientId = (await webClient()).body.client_id;
    const first = await freshSession(clientId, 'notes:read');
    if (isUrl(first.next)) throw new Error('expected consent');
    const denied = await first.ua.submit(first.next, { action: 'deny' }, WEB_REDIRECT);
    expect(isUrl(denied) && denied.searchParams.get('error')).toBe('access_denied');
    const again = await freshSession(clientId, 'notes:read');
    expect(isUrl(again.next)).toBe(false);
  });
});
