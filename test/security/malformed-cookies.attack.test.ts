import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { CookieJar } from 'tough-cookie';
import {
  authorizationUrl,
  frontChannel,
  leaksInternals,
  pkcePair,
  registerClient,
  startAttackStack,
  type AttackStack,
} from './helpers/support.js';
import { freePort } from '@mcp-auth-kit/test-utils';

/**
 * Malformed `Cookie` headers on every HTML page route of the AS: the interaction pages (login,
 * consent, upstream return), the upstream callback, the account page and oidc-provider's own
 * pages. RFC 6265 §5.4 leaves a cookie's value to the server to interpret and §4.1.1 says what
 * a well-formed one looks like; a request whose cookie is not (bad percent-encoding such as
 * `mcp_csrf=%zz`, a lone `%`, an unterminated quote, a huge value, duplicate names, raw
 * non-ASCII bytes) is a client error at most — it must never be a 500 (a URIError from
 * `decodeURIComponent` was), nor leak a stack, nor bypass the CSRF check.
 *
 * Requests are sent with node:http so the header carries exactly these bytes. Each malformed
 * cookie is sent alone, before the browser's real cookies (first occurrence wins) and after
 * them, so the handlers behind the interaction and session checks are reached too.
 */

const COOKIE_NAMES = [
  'mcp_csrf',
  'mcp_upstream',
  '_interaction',
  '_interaction.sig',
  '_interaction_resume',
  '_interaction_resume.sig',
  '_session',
  '_session.sig',
  '_state',
];

const MALFORMED: Array<[string, (name: string) => string]> = [
  ['bad percent-encoding', (n) => `${n}=%zz`],
  ['lone %', (n) => `${n}=%`],
  ['truncated UTF-8 escape', (n) => `${n}=%E0%A4%A`],
  ['invalid UTF-8 escape', (n) => `${n}=%ff%fe`],
  ['unterminated quote', (n) => `${n}="abc`],
  ['lone quote', (n) => `${n}="`],
  ['empty value', (n) => `${n}=`],
  ['no "="', (n) => n],
  ['huge value', (n) => `${n}=${'%zz'.repeat(2500)}`],
  ['duplicate names', (n) => `${n}=%zz; ${n}=%; ${n}=x`],
  ['raw non-ASCII bytes', (n) => `${n}=${Buffer.from('é€😀', 'utf8').toString('latin1')}`],
  ['empty pairs and tabs', (n) => `;;${n}=a\tb; ; =x; =`],
  ['prototype names', (n) => `__proto__=%zz; constructor=%; hasOwnProperty=x; ${n}=%zz`],
];

interface RawResponse {
  status: number;
  body: string;
}

/** One request with exactly these header bytes (latin1), as a browser or attacker can send them. */
function raw(url: string, method: string, cookie: string, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { cookie };
    if (body !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Route {
  label: string;
  method: 'GET' | 'POST';
  url: string;
  /** The browser's real cookies for this URL (the state that lets the request reach the handler). */
  cookies: string;
  body?: string;
}

describe('attack: malformed cookies on every AS page route', () => {
  let stack: AttackStack;
  const routes: Route[] = [];

  const formOf = (html: string) => ({
    action: /<form method="post" action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&'),
    csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]!,
  });

  beforeAll(async () => {
    // An upstream provider is configured so its callback route exists; nothing listens on its
    // (loopback) port, and no request here gets as far as contacting it.
    const closedPort = await freePort();
    stack = await startAttackStack({
      devAutoLogin: undefined,
      authorizationServer: { upstream: [{ name: 'Offline IdP', issuer: `http://127.0.0.1:${closedPort}`, clientId: 'as-client' }] },
    });
    const clientId = await registerClient(stack);
    const issuer = stack.issuer;
    const cookiesFor = (jar: CookieJar, url: string) => jar.getCookieString(url);

    // A live login interaction.
    const jar = new CookieJar();
    const authorize = authorizationUrl(stack, { clientId, challenge: pkcePair().challenge });
    const login = await frontChannel(issuer, authorize, jar);
    if (login.kind !== 'stopped' || login.status !== 200) throw new Error('expected the login page');
    const loginForm = formOf(login.body);
    const loginUrl = new URL(loginForm.action, issuer).href;
    const uid = new URL(loginUrl).pathname.split('/').at(-1)!;

    // A second browser signed in and standing on its consent page (and holding a session).
    const jar2 = new CookieJar();
    const login2 = await frontChannel(issuer, authorizationUrl(stack, { clientId, challenge: pkcePair().challenge }), jar2);
    if (login2.kind !== 'stopped') throw new Error('expected the login page');
    const form2 = formOf(login2.body);
    const url2 = new URL(form2.action, issuer).href;
    const signIn = await fetch(url2, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: await cookiesFor(jar2, url2) },
      body: new URLSearchParams({ csrf: form2.csrf, action: 'login', username: 'demo', password: 'demo-password' }).toString(),
    });
    for (const c of signIn.headers.getSetCookie()) await jar2.setCookie(c, url2, { ignoreError: true });
    expect(signIn.status).toBe(303);
    const consent = await frontChannel(issuer, new URL(signIn.headers.get('location')!, url2), jar2);
    if (consent.kind !== 'stopped' || consent.status !== 200) throw new Error('expected the consent page');
    const consentForm = formOf(consent.body);
    const consentUrl = new URL(consentForm.action, issuer).href;

    const add = async (label: string, method: 'GET' | 'POST', url: string, browser: CookieJar, body?: Record<string, string>) =>
      routes.push({ label, method, url, cookies: await cookiesFor(browser, url), body: body && new URLSearchParams(body).toString() });
    await add('login page', 'GET', loginUrl, jar);
    // `action=bogus` on the login prompt is a password attempt with no username: cheap once throttled.
    await add('login form post', 'POST', loginUrl, jar, { csrf: loginForm.csrf, action: 'bogus' });
    await add('upstream return page', 'GET', `${issuer}/interaction/${uid}/upstream`, jar);
    await add('upstream callback', 'GET', `${issuer}/interaction/upstream/callback?code=x&state=y&iss=${encodeURIComponent(issuer)}`, jar);
    await add('consent page', 'GET', consentUrl, jar2);
    await add('consent form post', 'POST', consentUrl, jar2, { csrf: consentForm.csrf, action: 'bogus' });
    const accountRes = await fetch(`${issuer}/account`, { headers: { cookie: await cookiesFor(jar2, `${issuer}/account`) } });
    for (const c of accountRes.headers.getSetCookie()) await jar2.setCookie(c, `${issuer}/account`, { ignoreError: true });
    await accountRes.arrayBuffer();
    // No approval yet, so no form on the page: the double-submit token is the cookie's value.
    const accountToken = (await jar2.getCookies(`${issuer}/account`)).find((c) => c.key === 'mcp_csrf')!.value;
    await add('account page', 'GET', `${issuer}/account`, jar2);
    await add('account form post', 'POST', `${issuer}/account`, jar2, { csrf: accountToken, action: 'revoke', client_id: 'nobody' });
    await add(
      'authorization endpoint (signed-in browser)',
      'GET',
      authorizationUrl(stack, { clientId, challenge: pkcePair().challenge }).href,
      jar2,
    );
    await add('session end', 'GET', `${issuer}/session/end`, jar2);
    // Resuming ends the interaction it names: a third browser's own, so the others stay live.
    const jar3 = new CookieJar();
    const login3 = await frontChannel(issuer, authorizationUrl(stack, { clientId, challenge: pkcePair().challenge }), jar3);
    if (login3.kind !== 'stopped') throw new Error('expected the login page');
    const uid3 = new URL(formOf(login3.body).action, issuer).pathname.split('/').at(-1)!;
    await add('authorization resume', 'GET', `${issuer}/auth/${uid3}`, jar3);
  });
  afterAll(async () => stack?.close());

  it('the routes are reached with real state (so the malformed cookie is what is tested)', async () => {
    const byLabel = Object.fromEntries(
      await Promise.all(routes.map(async (r) => [r.label, (await raw(r.url, r.method, r.cookies, r.body)).status] as const)),
    );
    expect(byLabel['login page']).toBe(200);
    expect(byLabel['consent page']).toBe(200);
    expect(byLabel['account page']).toBe(200);
    expect(byLabel['consent form post'], 'CSRF passed, then an unknown action').toBe(400);
    expect(byLabel['account form post'], 'CSRF passed and signed in, nothing to revoke').toBe(400);
    expect(byLabel['upstream callback'], 'an unknown flow').toBe(400);
  });

  it('no malformed cookie on any page route answers 5xx or leaks internals', async () => {
    const failures: string[] = [];
    const cases = routes.flatMap((route) =>
      MALFORMED.flatMap(([label, make]) =>
        COOKIE_NAMES.flatMap((name) => {
          const bad = make(name);
          return [bad, `${bad}; ${route.cookies}`, `${route.cookies}; ${bad}`].map((cookie) => ({ route, label, name, cookie }));
        }),
      ),
    );
    // A few at a time: enough to be quick, not a load test.
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const { route, label, name, cookie } = cases[next++]!;
        const res = await raw(route.url, route.method, cookie, route.body);
        // Leaks are looked for in refusals (the account page's own text, "access at once (its
        // tokens…", reads like a stack frame to `leaksInternals`).
        if (res.status >= 500 || (res.status >= 400 && leaksInternals(res.body)))
          failures.push(`${route.method} ${route.label} ← ${label} (${name}): HTTP ${res.status}`);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    const sent = cases.length;
    console.log(`malformed cookies: ${sent} requests over ${routes.length} routes`);
    expect(failures.slice(0, 40), `${failures.length} failures`).toEqual([]);
  }, 120_000);

  it('a malformed CSRF cookie never passes the CSRF check (login, consent, account → 403)', async () => {
    for (const route of routes.filter((r) => r.method === 'POST')) {
      const token = new URLSearchParams(route.body).get('csrf')!;
      for (const bad of ['%zz', '%', `"${token}`, `${token}%`, encodeURIComponent(token).replace(/./, '%zz')]) {
        // The malformed cookie comes first, so it is the one the server reads.
        const res = await raw(route.url, route.method, `mcp_csrf=${bad}; ${route.cookies}`, route.body);
        expect(res.status, `${route.label} with mcp_csrf=${bad}`).toBe(403);
      }
    }
  });
});
