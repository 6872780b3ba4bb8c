/**
 * The JSON admin API (issue 44) over real HTTP on loopback: sign-in through the AS's own login
 * page, the admin role, a fresh sign-in for changes, same-origin JSON with one-time change tokens
 * (OWASP CSRF cheat sheet: Origin check, synchronizer token), every change an audit event with the
 * operator's sub, and no secret in any answer. Attacks tried: no session, a non-admin, a stale
 * session, a cross-site request, a form post, a replayed change.
 */
import { describe, expect, it } from 'vitest';
import { HeadlessBrowser, isUrl } from '@mcp-auth-kit/test-utils';
import { CONFIDENTIAL_WEB_CLIENT, registerClient, type RunningAs } from './helpers/as.js';
import { startAsForDescribe } from './helpers/for-describe.js';

const CONSOLE = '/console';

/** Signs in through the console's sign-in (the AS login page) in a fresh browser. */
async function signIn(t: RunningAs, username: string, password: string): Promise<HeadlessBrowser> {
  const ua = new HeadlessBrowser();
  const consoleHome = (u: URL) => u.pathname === `${CONSOLE}/`;
  const page = await ua.follow(`${t.url}${CONSOLE}/sign-in`, consoleHome);
  if (isUrl(page)) throw new Error('signed in without a login page');
  expect(page.body).toContain('Sign in to the operator console.');
  const done = await ua.submit(page, { username, password, action: 'login' }, consoleHome);
  if (!isUrl(done)) throw new Error(`sign-in stopped at ${done.url} (${done.status}): ${done.body.slice(0, 300)}`);
  return ua;
}

async function api(ua: HeadlessBrowser | undefined, t: RunningAs, path: string, init: RequestInit = {}) {
  const url = `${t.url}${CONSOLE}/api${path}`;
  const page = ua
    ? await ua.request(url, init)
    : await fetch(url, { ...init, redirect: 'manual' }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.text() }));
  return { status: page.status, headers: page.headers, json: JSON.parse(page.body) as Record<string, any> };
}

/** A POST as the console sends it (same origin, JSON) with the change token `csrf` and the body text as given. */
function postJson(ua: HeadlessBrowser, t: RunningAs, path: string, body: string, csrf: string, headers: Record<string, string> = {}) {
  return api(ua, t, path, {
    method: 'POST',
    headers: { origin: t.url, 'content-type': 'application/json', 'x-csrf-token': csrf, ...headers },
    body,
  });
}

/** A change as the console sends it: same origin, JSON, a fresh change token. */
async function change(ua: HeadlessBrowser, t: RunningAs, path: string, body: unknown, headers: Record<string, string> = {}) {
  const { csrf } = (await api(ua, t, '/session')).json;
  return postJson(ua, t, path, JSON.stringify(body), csrf, headers);
}

describe('JSON admin API', () => {
  let t: RunningAs;
  let admin: HeadlessBrowser;
  let rootId: string;
  let aliceId: string;
  const secrets: string[] = [];

  startAsForDescribe(
    {
      users: [
        { username: 'alice', password: 'alice-password' },
        { username: 'root', password: 'root-password' },
      ],
      console: { path: CONSOLE, firstAdmin: 'root' },
    },
    async (started) => {
      t = started;
      const reg = (await registerClient(t.url, { ...CONFIDENTIAL_WEB_CLIENT, client_name: '<img src=x onerror=alert(1)>' })).body;
      secrets.push(reg.client_secret, reg.registration_access_token);
      for (const u of await t.as.store.accounts.list()) secrets.push(u.passwordHash!);
      rootId = (await t.as.store.accounts.findByUsername('root'))!.id;
      aliceId = (await t.as.store.accounts.findByUsername('alice'))!.id;
      admin = await signIn(t, 'root', 'root-password');
    },
  );

  it('no session: 401 login_required with where to sign in', async () => {
    const res = await api(undefined, t, '/users');
    expect(res.status).toBe(401);
    expect(res.json.error).toBe('login_required');
    expect(res.json.sign_in).toMatch(/client_id=urn%3Amcp-auth-kit%3Aconsole/);
  });

  it('a signed-in user without the admin role is refused (403 access_denied), reads and changes alike', async () => {
    const ua = await signIn(t, 'alice', 'alice-password');
    expect((await api(ua, t, '/users')).status).toBe(403);
    const res = await api(ua, t, `/users/${rootId}/disable`, {
      method: 'POST',
      headers: { origin: t.url, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(403);
    expect((await t.as.store.accounts.findById(rootId))?.disabled).toBe(false);
  });

  it('the first admin (console.firstAdmin) reads the session, users, clients, keys; JSON answers with strict headers', async () => {
    const session = await api(admin, t, '/session');
    expect(session.json).toMatchObject({ sub: rootId, username: 'root', admin: true, fresh: true });
    expect(session.headers.get('cache-control')).toBe('no-store');
    expect(session.headers.get('content-security-policy')).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
    expect(session.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await api(admin, t, '/users')).json.map((u: { username: string }) => u.username).sort()).toEqual(['alice', 'root']);
    const clients = (await api(admin, t, '/clients')).json as unknown as Array<{ origin: string; clientName?: string }>;
    // client metadata is data in JSON (the pages escape it), never interpreted here
    expect(clients.find((c) => c.origin === 'dcr')?.clientName).toBe('<img src=x onerror=alert(1)>');
    expect((await api(admin, t, '/keys')).json.signing.length).toBeGreaterThan(0);
  });

  it('a change with the right origin, JSON and a change token works and is audited with the operator sub', async () => {
    const res = await change(admin, t, `/users/${aliceId}/disable`, {});
    expect(res.status).toBe(200);
    expect(res.json.user.disabled).toBe(true);
    const audit = await api(admin, t, `/audit?event=account.disabled&account_id=${aliceId}`);
    expect(audit.json[0]).toMatchObject({ actor: rootId, accountId: aliceId, fields: { via: 'console' } });
    expect((await change(admin, t, `/users/${aliceId}/enable`, {})).status).toBe(200);
  });

  it('a replayed change (the same change token twice) is refused', async () => {
    const { csrf } = (await api(admin, t, '/session')).json;
    const send = () => postJson(admin, t, '/keys/cookie/rotate', '{}', csrf);
    expect((await send()).status).toBe(200);
    const replay = await send();
    expect(replay.status).toBe(403);
    expect(replay.json.error).toBe('access_denied');
  });

  it('cross-site requests are refused: another Origin, no Origin, Sec-Fetch-Site cross-site, a form post, no token', async () => {
    const before = (await t.as.store.keys.cookieKeys()).length;
    expect((await change(admin, t, '/keys/cookie/rotate', {}, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await change(admin, t, '/keys/cookie/rotate', {}, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    const { csrf } = (await api(admin, t, '/session')).json;
    const noOrigin = await api(admin, t, '/keys/cookie/rotate', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: '{}',
    });
    expect(noOrigin.status).toBe(403);
    const form = await api(admin, t, '/keys/cookie/rotate', {
      method: 'POST',
      headers: { origin: t.url, 'content-type': 'application/x-www-form-urlencoded', 'x-csrf-token': csrf },
      body: 'a=1',
    });
    expect(form.status).toBe(415);
    const noToken = await api(admin, t, '/keys/cookie/rotate', {
      method: 'POST',
      headers: { origin: t.url, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noToken.status).toBe(403);
    expect((await t.as.store.keys.cookieKeys()).length).toBe(before);
  });

  it('a change token of another session is refused', async () => {
    const other = await signIn(t, 'root', 'root-password');
    const { csrf } = (await api(other, t, '/session')).json;
    const res = await postJson(admin, t, '/keys/cookie/rotate', '{}', csrf);
    expect(res.status).toBe(403);
  });

  it('service refusals become OAuth-style errors (400 / 404 / 409); bad JSON is 400', async () => {
    expect((await change(admin, t, '/users', { username: 'alice', password: 'long-enough-1' })).status).toBe(409);
    expect((await change(admin, t, '/users/nobody/admin', { admin: true })).status).toBe(404);
    expect((await change(admin, t, '/keys/signing/rotate', { retireAfterSeconds: 1 })).json.error).toBe('invalid_request');
    const { csrf } = (await api(admin, t, '/session')).json;
    const bad = await postJson(admin, t, '/users', '{', csrf);
    expect(bad.status).toBe(400);
  });

  it('no answer carries a secret (client secret, registration token, password hash, key material)', async () => {
    const answers: string[] = [];
    for (const path of ['/clients', '/users', '/grants', '/keys', '/audit?limit=1000', '/session', `/users/${aliceId}`])
      answers.push(JSON.stringify((await api(admin, t, path)).json));
    const all = answers.join('\n');
    for (const secret of secrets) expect(all).not.toContain(secret);
    for (const key of await t.as.store.keys.cookieKeys()) expect(all).not.toContain(key);
    expect(all).not.toMatch(/"(d|p|q|dp|dq|qi)":|passwordHash/);
  });
});

describe('JSON admin API: a stale sign-in', () => {
  let t: RunningAs;
  startAsForDescribe(
    {
      users: [{ username: 'root', password: 'root-password' }],
      console: { path: CONSOLE, maxAgeSeconds: 1, firstAdmin: 'root' },
    },
    (started) => (t = started),
  );

  it('reads work, a change needs a sign-in at most maxAgeSeconds old (401 login_required)', async () => {
    const ua = await signIn(t, 'root', 'root-password');
    await new Promise((r) => setTimeout(r, 2100));
    expect((await api(ua, t, '/users')).status).toBe(200);
    const res = await change(ua, t, '/keys/cookie/rotate', {});
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ error: 'login_required' });
    expect((await api(ua, t, '/session')).json.fresh).toBe(false);
  });
});
