/**
 * Attacks on the operator console (issue 44): a non-admin, an anonymous browser, a stale
 * session, a cross-site form, a replayed form, and HTML injection through client metadata
 * (names, redirect URIs, logos a client chose itself) are refused or escaped; the pages carry
 * the AS pages' CSP and frame rules.
 *
 * - OWASP CSRF cheat sheet (synchronizer token pattern): every change needs a token issued to
 *   the same browser session, good for one change (admin/change-token.ts).
 * - OpenID Connect Core §3.1.2.1 `max_age`: a change needs a sign-in no older than
 *   `console.freshSignInSeconds` (admin/operator.ts).
 * - MCP security best practices §Consent UI / the AS pages: no framing, no script.
 */
import { randomBytes } from 'node:crypto';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createLoopbackCertificate } from '@mcp-auth-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { authorizationUrl, frontChannel, pkcePair, postRegistration, startAttackStack, type AttackStack } from './helpers/support.js';
import { consolePage, consolePost, formFields, signInToConsole } from './helpers/console.js';

const FRESH = 3;
const OPERATOR = { username: 'olivia', password: 'olivia-console-password', displayName: 'Olivia Operator' };
const USER = { username: 'bob', password: 'bob-console-password', displayName: 'Bob User' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** What a hostile client metadata document says about itself (CIMD: the client chooses every field). */
const HOSTILE_NAME = `<img src=x onerror=alert(1)>"><script>alert(2)</script>`;
const HOSTILE_LOGO = 'https://127.0.0.1/logo.png?"><script>alert(3)</script>';

describe('attack: the operator console', () => {
  let stack: AttackStack;
  let operatorId: string;
  let userId: string;
  let cimdHost: HttpsServer;
  let cimdClientId: string;

  beforeAll(async () => {
    const cert = await createLoopbackCertificate();
    cimdHost = createHttpsServer({ cert: cert.cert, key: cert.key }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: cimdClientId,
          client_name: HOSTILE_NAME,
          logo_uri: HOSTILE_LOGO,
          client_uri: 'https://127.0.0.1/"><script>alert(4)</script>',
          redirect_uris: ['http://127.0.0.1/callback?x=<b>bold</b>'],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((r) => cimdHost.listen(0, '127.0.0.1', r));
    cimdClientId = `https://127.0.0.1:${(cimdHost.address() as AddressInfo).port}/client.json`;
    stack = await startAttackStack({
      devAutoLogin: undefined,
      cimdAllowPrivateNetwork: true,
      authorizationServer: {
        users: [OPERATOR, USER],
        console: { path: '/console', maxAgeSeconds: FRESH },
        cimd: { allowPrivateNetwork: true, extraCaCertificates: cert.cert },
      },
    });
    const accounts = stack.as.server.store.accounts;
    operatorId = (await accounts.findByUsername(OPERATOR.username))!.id;
    userId = (await accounts.findByUsername(USER.username))!.id;
    await accounts.update(operatorId, { admin: true });
  });
  afterAll(async () => {
    await stack?.close();
    cimdHost?.closeAllConnections();
    cimdHost?.close();
  });

  const signingKids = async () => (await stack.as.server.store.keys.signingKeys()).map((k) => `${k.jwk.kid} ${k.status}`);
  const userDisabled = async (id: string) => (await stack.as.server.store.accounts.findById(id))!.disabled;

  it('anonymous: every page answers the sign-in prompt (401, no data), a POST changes nothing', async () => {
    const browser = new HeadlessBrowser();
    for (const path of ['', '/clients', '/cimd', '/users', `/users/${operatorId}`, '/grants', '/keys', '/audit']) {
      const page = await consolePage(browser, stack.issuer, path);
      expect(page.status, path).toBe(401);
      expect(page.body).toContain('Sign in with an operator account');
      expect(page.body).not.toContain(OPERATOR.username);
    }
    const before = await signingKids();
    const res = await consolePost(browser, stack.issuer, '/keys/rotate-signing', { csrf: 'x'.repeat(32) });
    expect(res.status).toBe(401);
    expect(await signingKids()).toEqual(before);
  });

  it('a signed-in account without the admin role is refused on every page and every form (403); nothing changes', async () => {
    const { browser, landed } = await signInToConsole(stack.issuer, USER);
    expect(landed.status).toBe(403);
    expect(landed.body).toContain('This account may not use the operator console.');
    for (const path of ['', '/users', '/audit', '/keys']) expect((await consolePage(browser, stack.issuer, path)).status).toBe(403);
    // Even with a token issued to an operator's session, the user's own session is not an operator's.
    const { browser: operator } = await signInToConsole(stack.issuer, OPERATOR);
    const stolen = formFields(await consolePage(operator, stack.issuer, `/users/${operatorId}`), '/users/disable');
    const res = await consolePost(browser, stack.issuer, '/users/disable', stolen);
    expect(res.status).toBe(403);
    expect(await userDisabled(operatorId)).toBe(false);
  });

  it('the pages carry the CSP of the AS pages (no script, styles from self), no framing, no caching, no referrer', async () => {
    const { browser } = await signInToConsole(stack.issuer, OPERATOR);
    const page = await consolePage(browser, stack.issuer, '/users');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.body).not.toMatch(/<script|style=/i);
  });

  it(`stale session: a sign-in older than ${FRESH} s may look but not change (401 "sign in again"); a fresh sign-in may`, async () => {
    const { browser } = await signInToConsole(stack.issuer, OPERATOR);
    const page = await consolePage(browser, stack.issuer, '/keys');
    const fields = formFields(page, '/keys/rotate-signing');
    const before = await signingKids();
    await sleep((FRESH + 1.2) * 1000);
    expect((await consolePage(browser, stack.issuer, '/keys')).status).toBe(200);
    const stale = await consolePost(browser, stack.issuer, '/keys/rotate-signing', fields);
    expect(stale.status).toBe(401);
    expect(stale.body).toContain('Changes need a recent sign-in. Nothing was changed.');
    expect(await signingKids()).toEqual(before);
    // Signing in again (prompt=login: the password is asked again) makes changes possible.
    await signInToConsole(stack.issuer, OPERATOR, browser);
    const again = formFields(await consolePage(browser, stack.issuer, '/keys'), '/keys/rotate-signing');
    const fresh = await consolePost(browser, stack.issuer, '/keys/rotate-signing', again);
    expect(fresh.status).toBe(303);
    expect(await signingKids()).not.toEqual(before);
  });

  it('cross-site form: no token, a made-up token, or a token of another session is refused (403); the session cookie is SameSite', async () => {
    const { browser } = await signInToConsole(stack.issuer, OPERATOR);
    const session = browser.cookies.find((c) => c.name === '_session');
    expect(session).toBeDefined();
    const raw = ((await browser.jar.getSetCookieStrings(stack.issuer)) ?? []).find((c) => c.startsWith('_session='));
    expect(raw).toMatch(/SameSite=(Lax|Strict)/i);
    const { browser: other } = await signInToConsole(stack.issuer, OPERATOR);
    const othersToken = formFields(await consolePage(other, stack.issuer, `/users/${userId}`), '/users/disable').csrf ?? '';
    for (const csrf of [undefined, randomBytes(24).toString('base64url'), othersToken]) {
      const res = await consolePost(browser, stack.issuer, '/users/disable', { account_id: userId, ...(csrf && { csrf }) });
      expect(res.status).toBe(403);
      expect(res.body).toContain('Nothing was changed.');
    }
    // A browser marks a cross-site form (Fetch Metadata): refused even with a live token of this session.
    const own = formFields(await consolePage(browser, stack.issuer, `/users/${userId}`), '/users/disable');
    for (const site of ['cross-site', 'same-site']) {
      const res = await consolePost(browser, stack.issuer, '/users/disable', own, {
        'sec-fetch-site': site,
        origin: 'https://attacker.example',
      });
      expect(res.status).toBe(403);
    }
    expect(await userDisabled(userId)).toBe(false);
  });

  it('replayed form: the same POST sent twice changes once; the second is refused (403 "already sent")', async () => {
    const { browser } = await signInToConsole(stack.issuer, OPERATOR);
    const fields = formFields(await consolePage(browser, stack.issuer, '/users'), '/users/create');
    const form = { ...fields, username: `carol${randomBytes(3).toString('hex')}`, password: 'carol-console-password' };
    const first = await consolePost(browser, stack.issuer, '/users/create', form);
    expect(first.status).toBe(303);
    const replay = await consolePost(browser, stack.issuer, '/users/create', form);
    expect(replay.status).toBe(403);
    expect(replay.body).toContain('This form was already sent, has expired, or is not from this console. Nothing was changed.');
    const created = await stack.as.server.store.audit.search({ event: 'account.created', limit: 1000 });
    expect(created.filter((e) => JSON.stringify(e.fields).includes(form.username))).toHaveLength(1);
  });

  it('HTML injection through DCR client metadata (name, redirect URI, logo chosen by the client) is escaped; no logo is loaded', async () => {
    const name = HOSTILE_NAME;
    const reg = await postRegistration(stack, {
      client_name: name,
      logo_uri: HOSTILE_LOGO,
      redirect_uris: ['http://127.0.0.1/callback?x="><b>bold</b>'],
    });
    expect(reg.status, reg.text).toBe(201);
    const { browser } = await signInToConsole(stack.issuer, OPERATOR);
    const page = await consolePage(browser, stack.issuer, '/clients');
    expect(page.status).toBe(200);
    expect(page.body).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(page.body).not.toMatch(/<script|<img|<b>bold/i);
    expect(page.body).not.toContain('logo.png');
  });

  it('HTML injection through a CIMD document (name, URIs, logo) waiting for approval is escaped in the queue; no logo is loaded', async () => {
    await stack.as.server.store.cimdTrust.setPolicy({ allowedHosts: [], deniedHosts: [], approvalRequired: true, updatedBy: 'test' });
    const waiting = await frontChannel(
      stack.issuer,
      authorizationUrl(stack, {
        clientId: cimdClientId,
        redirectUri: 'http://127.0.0.1/callback?x=<b>bold</b>',
        challenge: pkcePair().challenge,
      }),
    );
    expect(waiting.kind).toBe('stopped');
    if (waiting.kind === 'stopped') expect(waiting.body).not.toMatch(/<script|<img|<b>bold/i);
    const { browser } = await signInToConsole(stack.issuer, OPERATOR);
    for (const path of ['/cimd', '/clients']) {
      const page = await consolePage(browser, stack.issuer, path);
      expect(page.status).toBe(200);
      expect(page.body, path).toContain(cimdClientId);
      expect(page.body, path).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
      expect(page.body, path).not.toMatch(/<script|<img|<b>bold/i);
      expect(page.body, path).not.toContain('logo.png');
    }
  });
});

describe('attack: the console is off unless configured', () => {
  let stack: AttackStack;
  beforeAll(async () => {
    stack = await startAttackStack({ devAutoLogin: undefined, authorizationServer: { users: [OPERATOR] } });
    const accounts = stack.as.server.store.accounts;
    await accounts.update((await accounts.findByUsername(OPERATOR.username))!.id, { admin: true });
  });
  afterAll(async () => stack?.close());

  it('no console pages, and no console client to sign in with', async () => {
    const browser = new HeadlessBrowser();
    for (const path of ['', '/users', '/sign-in']) expect((await consolePage(browser, stack.issuer, path)).status).toBe(404);
    const signIn = await frontChannel(
      stack.issuer,
      authorizationUrl(stack, {
        clientId: 'urn:mcp-auth-kit:console',
        redirectUri: `${stack.issuer}/console/signed-in`,
        challenge: pkcePair().challenge,
      }),
    );
    expect(signIn.kind).toBe('stopped');
    if (signIn.kind === 'stopped') expect(signIn.status).toBe(400);
  });
});
