/**
 * The real login and consent pages in a real browser (Chromium, headless), DEV_AUTO_LOGIN off:
 * the whole authorization through the pages, deny, wrong password, the localhost warning and
 * the redirect host on the consent page, a form without its CSRF token, and sign-in through an
 * upstream OpenID Connect provider. Each test leaves a screenshot in test-results/browser/.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { pkcePair } from '@mcp-auth-kit/test-utils';
import { launchChromium, loopbackContext, PHONE, screenshot, startPagesAuthServer, startRedirectListener } from './harness.js';
import { registerPublicClient } from '../helpers/registration.js';
import { sharedForSuite } from '../helpers/suite.js';
import {
  startUpstreamIdp,
  UPSTREAM_CLIENT_ID,
  UPSTREAM_CLIENT_SECRET,
} from '../../packages/authorization-server/test/helpers/upstream-idp.js';

const RESOURCE = 'http://127.0.0.1:3999/mcp';
const PASSWORD = 'alice-browser-password';

describe('browser: login and consent pages (Chromium)', () => {
  const listener = sharedForSuite(startRedirectListener);
  const idp = sharedForSuite(startUpstreamIdp);
  const as = sharedForSuite(() =>
    startPagesAuthServer(RESOURCE, {
      users: [{ username: 'alice', password: PASSWORD, displayName: 'Alice Example' }],
      upstream: [
        {
          name: 'Upstream IdP',
          issuer: idp.issuer,
          clientId: UPSTREAM_CLIENT_ID,
          clientSecret: UPSTREAM_CLIENT_SECRET,
          allowSignup: true,
        },
      ],
    }),
  );
  const browser = sharedForSuite(launchChromium);
  let clientId: string;

  beforeAll(async () => {
    await idp.configure(`${as.issuer}/interaction/upstream/callback`);
    clientId = await registerPublicClient(`${as.url}/reg`, {
      client_name: 'Browser Test Client',
      redirect_uris: [listener.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
    });
  }, 60_000);

  function authorizeUrl(challenge: string, scope = 'notes:read notes:write') {
    const url = new URL(`${as.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: listener.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope,
      resource: RESOURCE,
      state: 'browser-state',
    }).toString();
    return url.href;
  }

  async function openLogin(viewport?: { width: number; height: number }) {
    const { context, cspViolations } = await loopbackContext(browser, viewport);
    const page = await context.newPage();
    const { verifier, challenge } = pkcePair();
    await page.goto(authorizeUrl(challenge));
    await page.getByRole('heading', { name: /Sign in to/ }).waitFor();
    return { context, page, verifier, cspViolations };
  }

  async function signIn(page: Page, password = PASSWORD) {
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  const atCallback = (page: Page) => page.waitForURL((url) => url.href.startsWith(listener.redirectUri));
  /** On the consent page, which says `says`: a screenshot, Approve, and a code at the callback. */
  const approveAtConsent = async (page: Page, says: string, shot: string) => {
    await page.getByRole('heading', { name: 'Authorize access' }).waitFor();
    expect(await page.locator('main').innerText()).toContain(says);
    await screenshot(page, shot);
    await page.getByRole('button', { name: 'Approve' }).click();
    await atCallback(page);
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
  };

  it('full authorization through the real pages: login, consent (unverified name, redirect host, localhost warning, scopes), approve → code → token', async () => {
    const { context, page, verifier, cspViolations } = await openLogin();
    // The stylesheet is external and applied (style-src 'self'; no inline styles).
    expect(await page.evaluate("getComputedStyle(document.querySelector('main')).borderRadius")).toBe('8px');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await screenshot(page, 'login-desktop');
    await signIn(page);

    await page.getByRole('heading', { name: 'Authorize access' }).waitFor();
    const text = await page.locator('main').innerText();
    expect(text).toContain('Browser Test Client');
    expect(text).toContain('unverified');
    expect(text).toContain(clientId);
    // MCP security §Localhost Redirect URI Risks: the redirect host is shown (MUST) and a
    // loopback-only client gets a visible warning (SHOULD).
    expect(text).toContain(new URL(listener.redirectUri).host);
    await expect.poll(() => page.getByRole('alert').isVisible()).toBe(true);
    expect(await page.getByRole('alert').innerText()).toMatch(/only redirects to your own computer \(localhost\)/);
    expect(text).toContain(RESOURCE);
    expect(text).toContain('Read your notes');
    expect(text).toContain('Create and change your notes');
    await screenshot(page, 'consent-desktop');
    await page.setViewportSize(PHONE);
    // Readable at phone width: nothing wider than the viewport.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await screenshot(page, 'consent-phone');

    await page.getByRole('button', { name: 'Approve' }).click();
    await atCallback(page);
    const callback = new URL(page.url());
    expect(callback.searchParams.get('iss')).toBe(as.issuer);
    expect(callback.searchParams.get('state')).toBe('browser-state');
    const code = callback.searchParams.get('code');
    expect(code).toBeTruthy();
    await screenshot(page, 'callback');
    const token = await fetch(`${as.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code!,
        redirect_uri: listener.redirectUri,
        code_verifier: verifier,
        client_id: clientId,
        resource: RESOURCE,
      }),
    });
    expect(token.status).toBe(200);
    const body = (await token.json()) as { access_token: string; scope: string };
    expect(body.scope).toBe('notes:read notes:write');
    expect(cspViolations).toEqual([]);
    await context.close();
  });

  /** RFC 6749 §4.1.2.1: the browser lands on the client's callback with access_denied, iss (RFC 9207) and no code. */
  async function expectDeniedAtCallback(page: Page) {
    await atCallback(page);
    const callback = new URL(page.url());
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('iss')).toBe(as.issuer);
    expect(callback.searchParams.get('code')).toBeNull();
  }

  it('RFC 6749 §4.1.2.1: Cancel on the login page → access_denied with iss (RFC 9207), no code', async () => {
    const { context, page } = await openLogin();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expectDeniedAtCallback(page);
    await screenshot(page, 'deny-callback');
    await context.close();
  });

  it('wrong password: the error is shown, linked to the fields (aria-describedby), no redirect', async () => {
    const { context, page } = await openLogin(PHONE);
    await signIn(page, 'not-the-password');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toBe('Invalid username or password.');
    expect(await page.getByLabel('Password').getAttribute('aria-describedby')).toBe('login-error');
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    expect(page.url()).not.toContain(listener.redirectUri);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await screenshot(page, 'login-wrong-password-phone');
    await context.close();
  });

  it('CSRF: the login form posted without its token is refused (403), not signed in', async () => {
    const { context, page } = await openLogin();
    await page
      .locator('input[name="csrf"]')
      .first()
      .evaluate((el) => el.remove());
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(PASSWORD);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in', exact: true }).click(),
    ]);
    expect(response.status()).toBe(403);
    await page.getByRole('heading', { name: 'Something went wrong' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('The form expired');
    await screenshot(page, 'csrf-refused');
    await context.close();
  });

  it('RFC 6749 §4.1.2.1: Deny on the consent page → access_denied with iss (RFC 9207), no code', async () => {
    const { context, page } = await openLogin();
    await page.getByRole('button', { name: /Sign in with Upstream IdP/ }).click();
    await page.getByLabel('Upstream login').fill('dana');
    await page.getByRole('button', { name: 'Sign in at the upstream IdP' }).click();
    await page.getByRole('heading', { name: 'Authorize access' }).waitFor();
    await screenshot(page, 'consent-before-deny');
    await page.getByRole('button', { name: 'Deny' }).click();
    await expectDeniedAtCallback(page);
    await context.close();
  });

  it('sign-in with an upstream OpenID Connect provider → consent for the linked account → code', async () => {
    const { context, page, cspViolations } = await openLogin();
    await page.getByRole('button', { name: 'Sign in with Upstream IdP' }).click();
    await page.waitForURL((url) => url.origin === idp.issuer);
    await page.getByLabel('Upstream login').fill('eve');
    await screenshot(page, 'upstream-idp');
    await page.getByRole('button', { name: 'Sign in at the upstream IdP' }).click();
    await approveAtConsent(page, 'Upstream eve', 'upstream-consent');
    const account = await as.server.store.accounts.findByUpstreamIdentity(idp.issuer, 'eve');
    expect(account?.username).toBe('eve');
    expect(cspViolations).toEqual([]);
    await context.close();
  });
  it('a loopback client is asked again even when remembered ("allowed before"); /account revokes the approval', async () => {
    const { context, page } = await openLogin();
    await signIn(page);
    // Approved in the first test, but a loopback-only client can be impersonated by any local
    // program (MCP security §Localhost Redirect URI Risks): the page is shown again.
    await approveAtConsent(page, 'You allowed this access before', 'consent-reconfirm');

    await page.goto(`${as.issuer}/account`);
    await page.getByRole('heading', { name: 'Connected apps' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('Browser Test Client');
    await screenshot(page, 'account-desktop');
    await page.getByRole('button', { name: 'Revoke access of Browser Test Client' }).click();
    await page.getByText('Access revoked.').waitFor();
    expect(await page.locator('main').innerText()).toContain('No application has access');
    await screenshot(page, 'account-revoked');
    await page.goto(authorizeUrl(pkcePair().challenge));
    await page.getByRole('heading', { name: 'Authorize access' }).waitFor();
    expect(await page.locator('main').innerText()).not.toContain('You allowed this access before');
    await context.close();
  });
});
