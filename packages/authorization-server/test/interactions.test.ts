import { describe, expect, it } from 'vitest';
import { addAccount, decodeJwt, REDIRECT, registerClient, RESOURCE, type RunningAs } from './helpers/as.js';
import { codeAuthorizeUrl, exchangeCode, postFormAsIs } from './helpers/flow.js';
import { type BrowserPage, HeadlessBrowser, isUrl, pkcePair } from '@mcp-auth-kit/test-utils';
import { startAsForDescribe } from './helpers/for-describe.js';

/** MCP security §Localhost Redirect URI Risks: the consent page's warning, exactly as rendered. */
const LOOPBACK_WARNING =
  '<p class="warn" role="alert"><strong>Local application.</strong> This application only redirects to your own computer (localhost). ' +
  'Any program on this computer could have made this request: approve only if you just started it yourself.</p>';

describe('login and consent pages', () => {
  let t: RunningAs;
  let clientId: string;
  startAsForDescribe(
    {
      clients: [
        {
          client_id: 'operator-client',
          client_name: 'Operator Client',
          redirect_uris: ['https://app.example/cb'],
          token_endpoint_auth_method: 'none',
        },
      ],
    },
    async (started) => {
      t = started;
      clientId = (await registerClient(t.url, { client_name: 'Evil <script>alert(1)</script> App' })).body.client_id;
      await addAccount(t, 'bob-id', 'bob');
    },
  );

  async function start(ua: HeadlessBrowser, scope = 'notes:read notes:write', client = clientId, redirect = REDIRECT) {
    const { verifier, challenge } = pkcePair();
    const page = await ua.follow(
      codeAuthorizeUrl(t.url, challenge, { client_id: client, redirect_uri: redirect, scope, state: 'st' }),
      redirect,
    );
    if (isUrl(page)) throw new Error(`unexpected redirect ${page.href}`);
    return { page, verifier };
  }

  async function login(ua: HeadlessBrowser, page: BrowserPage, username = 'alice', password = 'alice-password') {
    const next = await ua.submit(page, { username, password, action: 'login' }, REDIRECT);
    if (isUrl(next)) throw new Error('expected the consent page');
    return next;
  }

  it('renders a login page with no-store, CSP and frame protection', async () => {
    const { page } = await start(new HeadlessBrowser());
    expect(page.status).toBe(200);
    expect(page.body).toContain('name="password"');
    expect(page.body).toMatch(/name="csrf" value="[^"]{20,}"/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "frame-ancestors 'none'", "script-src 'none'", 'form-action'])
      expect(csp).toContain(directive);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  });

  it('escapes the self-asserted client name (no HTML injection)', async () => {
    const { page } = await start(new HeadlessBrowser());
    expect(page.body).not.toContain('<script>alert(1)</script>');
    expect(page.body).toContain('&lt;script&gt;');
  });

  it('refuses a wrong password with a generic message and no redirect', async () => {
    const ua = new HeadlessBrowser();
    const { page } = await start(ua);
    const next = await ua.submit(page, { username: 'alice', password: 'wrong-password', action: 'login' }, REDIRECT);
    expect(isUrl(next)).toBe(false);
    if (!isUrl(next)) {
      expect(next.status).toBe(401);
      expect(next.body).toContain('Invalid username or password.');
      expect(next.body).not.toContain('wrong-password');
    }
  });

  it('refuses an unknown user with the same message', async () => {
    const ua = new HeadlessBrowser();
    const { page } = await start(ua);
    const next = await ua.submit(page, { username: 'mallory', password: 'whatever-password', action: 'login' }, REDIRECT);
    expect(!isUrl(next) && next.status).toBe(401);
    expect(!isUrl(next) && next.body).toContain('Invalid username or password.');
  });

  it('brute force: after 10 failures for one user from one address, even the right password is throttled (429)', async () => {
    const ua = new HeadlessBrowser();
    let { page } = await start(ua);
    for (let i = 0; i < 10; i++) {
      const next = await ua.submit(page, { username: 'bob', password: `wrong-${i}`, action: 'login' }, REDIRECT);
      if (isUrl(next)) throw new Error('unexpected redirect');
      expect(next.status).toBe(401);
      page = next;
    }
    const blocked = await ua.submit(page, { username: 'bob', password: 'bob-password', action: 'login' }, REDIRECT);
    expect(!isUrl(blocked) && blocked.status).toBe(429);
    expect(!isUrl(blocked) && blocked.body).toContain('Too many failed attempts');
    // Other users are not affected.
    if (isUrl(blocked)) throw new Error('unexpected redirect');
    const other = await ua.submit(blocked, { username: 'alice', password: 'alice-password', action: 'login' }, REDIRECT);
    expect(!isUrl(other) && other.status).toBe(200);
  });

  it('CSRF: a login post without the form token is refused (403)', async () => {
    const ua = new HeadlessBrowser();
    const { page } = await start(ua);
    const res = await postFormAsIs(ua, page, { username: 'alice', password: 'alice-password', action: 'login', csrf: 'forged' });
    expect(res.status).toBe(403);
  });

  it('MCP security §CIMD/§consent: consent shows client id, unverified name, redirect host, loopback warning, resource and scope descriptions', async () => {
    const ua = new HeadlessBrowser();
    const { page } = await start(ua);
    const consent = await login(ua, page);
    expect(consent.status).toBe(200);
    expect(consent.body).toContain(clientId);
    expect(consent.body).toContain('unverified');
    expect(consent.body).toContain('127.0.0.1:7777');
    expect(consent.body).toContain(LOOPBACK_WARNING);
    expect(consent.body).toContain(RESOURCE);
    expect(consent.body).toContain('notes:write');
    expect(consent.body).toContain('Change your notes');
    expect(consent.headers.get('cache-control')).toBe('no-store');
    expect(consent.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:7777");
  });

  it('operator-registered clients are not marked unverified and get no loopback warning', async () => {
    const ua = new HeadlessBrowser();
    const { page } = await start(ua, 'notes:read', 'operator-client', 'https://app.example/cb');
    const next = await ua.submit(page, { username: 'alice', password: 'alice-password', action: 'login' }, 'https://app.example/cb');
    if (isUrl(next)) throw new Error('expected consent');
    expect(next.body).toContain('Operator Client');
    expect(next.body).not.toContain('unverified');
    expect(next.body).not.toContain('only redirects to your own computer');
    expect(next.body).toContain('app.example');
  });

  it('MCP security §Localhost Redirect URI Risks: no localhost-only warning when one of the redirect URIs is https (the hostname is still shown)', async () => {
    const mixed = await registerClient(t.url, {
      client_name: 'Mixed Redirects',
      application_type: 'web',
      redirect_uris: [REDIRECT, 'https://app.example/cb'],
    });
    expect(mixed.status).toBe(201);
    const ua = new HeadlessBrowser();
    const { page } = await start(ua, 'notes:read', mixed.body.client_id);
    const consent = await login(ua, page);
    expect(consent.body).toContain('Authorize access');
    expect(consent.body).toContain('127.0.0.1:7777');
    expect(consent.body).not.toContain('only redirects to your own computer');
    expect(consent.body).not.toContain('Local application.');
  });

  it('a disabled local account is refused at the password form even with the right password: no session, no code', async () => {
    await addAccount(t, 'carol-id', 'carol');
    // The same store call as `npm run admin -- user disable carol`.
    await t.as.store.accounts.update('carol-id', { disabled: true });
    const ua = new HeadlessBrowser();
    const { page } = await start(ua);
    const refused = await ua.submit(page, { username: 'carol', password: 'carol-password', action: 'login' }, REDIRECT);
    if (isUrl(refused)) throw new Error(`disabled account got a redirect: ${refused.href}`);
    // The password was right, so the page may say why (a wrong password still gets the generic message).
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('This account is disabled.');
    expect(refused.body).toContain('name="password"');
    expect(refused.body).not.toContain('carol-password');
    expect(ua.cookies.map((c) => c.name)).not.toContain('_session');
    // No session: a new authorization request in the same browser shows the login page again.
    const again = await start(ua);
    expect(again.page.body).toContain('name="password"');
    expect(again.page.body).not.toContain('Authorize access');

    // Enabled again, the same password signs in (so the refusal above was the disabled flag)...
    await t.as.store.accounts.update('carol-id', { disabled: false });
    const consent = await login(ua, again.page, 'carol', 'carol-password');
    expect(consent.body).toContain('Authorize access');
    expect(ua.cookies.map((c) => c.name)).toContain('_session');
    // ...and once disabled again, that live browser session gets neither a code nor the consent page.
    await t.as.store.accounts.update('carol-id', { disabled: true });
    const afterDisable = await start(ua);
    expect(afterDisable.page.body).not.toContain('Authorize access');
    expect(afterDisable.page.body).not.toMatch(/at .*\.js:\d+/);
  });

  // oidc-provider asks for a login only when the session has no account id; our login check
  // (interaction-policy.ts) also asks when the session's account is disabled or gone.
  it('disabling an account ends its live browser session: the next authorization request shows the login page', async () => {
    await addAccount(t, 'erin-id', 'erin');
    const ua = new HeadlessBrowser();
    const { page } = await start(ua);
    expect((await login(ua, page, 'erin', 'erin-password')).body).toContain('Authorize access');
    await t.as.store.accounts.update('erin-id', { disabled: true });
    const next = await start(ua);
    expect(next.page.status).toBe(200);
    expect(next.page.body).toContain('name="password"');
  });

  it('RFC 6749 §4.1.2.1: deny → access_denied with iss (RFC 9207) and state', async () => {
    const ua = new HeadlessBrowser();
    const { page } = await start(ua);
    const consent = await login(ua, page);
    const result = await ua.submit(consent, { action: 'deny' }, REDIRECT);
    expect(isUrl(result)).toBe(true);
    if (isUrl(result)) {
      expect(result.searchParams.get('error')).toBe('access_denied');
      expect(result.searchParams.get('iss')).toBe(t.as.issuer);
      expect(result.searchParams.get('state')).toBe('st');
      expect(result.searchParams.get('code')).toBeNull();
    }
  });

  it('approve → code → JWT for the logged-in account with the approved scopes', async () => {
    const ua = new HeadlessBrowser();
    const { page, verifier } = await start(ua);
    const consent = await login(ua, page);
    const result = await ua.submit(consent, { action: 'approve' }, REDIRECT);
    if (!isUrl(result)) throw new Error(`no redirect: ${result.status} ${result.body.slice(0, 200)}`);
    expect(result.searchParams.get('iss')).toBe(t.as.issuer);
    const token = await exchangeCode(t.url, clientId, { callback: result, verifier });
    expect(token.status).toBe(200);
    const { payload } = decodeJwt(token.body.access_token);
    const alice = await t.as.store.accounts.findByUsername('alice');
    expect(payload.sub).toBe(alice!.id);
    expect(payload.scope).toBe('notes:read notes:write');
  });

  it('MCP step-up: in the same session, consent asks only for the missing scope', async () => {
    // A client of its own: alice's grants are remembered per client across sessions.
    const fresh = (await registerClient(t.url, { client_name: 'Step-up Client' })).body.client_id;
    const ua = new HeadlessBrowser();
    const { page } = await start(ua, 'notes:read', fresh);
    const consent = await login(ua, page);
    const first = await ua.submit(consent, { action: 'approve' }, REDIRECT);
    expect(isUrl(first)).toBe(true);
    const { page: stepUp } = await start(ua, 'notes:read notes:write', fresh);
    expect(stepUp.body).toContain('Authorize access');
    // Only the missing scope is asked; what was allowed before is listed with its description too.
    const asked = /New permissions<\/dt><dd>([\s\S]*?)<\/dd>/.exec(stepUp.body)?.[1] ?? '';
    expect(asked).toContain('Change your notes');
    expect(asked).not.toContain('Read your notes');
    expect(/Already allowed<\/dt><dd class="muted">([\s\S]*?)<\/dd>/.exec(stepUp.body)?.[1]).toContain('Read your notes');
    const second = await ua.submit(stepUp, { action: 'approve' }, REDIRECT);
    expect(isUrl(second) && second.searchParams.get('code')).toBeTruthy();
  });

  it('an expired or unknown interaction shows an error page, not a stack', async () => {
    const res = await new HeadlessBrowser().request(`${t.url}/interaction/does-not-exist`);
    expect(res.status).toBe(400);
    expect(res.body).toContain('expired or is invalid');
    expect(res.body).not.toMatch(/at .*\.js:\d+/);
  });
});
