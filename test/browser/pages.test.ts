/**
 * What the pages say, in Chromium (issue 22): the consent page names the MCP server the user
 * grants access to (display name and URL) and describes every scope (offline_access included,
 * "Already allowed" too); a reused session offers "Not you? Use another account", which ends
 * it; the client library's loopback callback page says signed in / access denied / error and
 * that the window can be closed, styled, with no CSP violation.
 *
 * The screenshots of login, consent, step-up consent, the reused-session consent and the
 * callback pages land in test-results/browser/; `npm run screenshots` (UPDATE_SCREENSHOTS=1)
 * also copies them to packages/authorization-server/docs/screenshots/, shown in the AS README.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DEMO_SCOPES, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import { startLoopbackListener } from '@mcp-auth-kit/client/core';
import { pkcePair } from '@mcp-auth-kit/test-utils';
import { launchChromium, loopbackContext, PHONE, SCREENSHOTS, screenshot, startPagesAuthServer } from './harness.js';
import { registerPublicClient } from '../helpers/registration.js';

const RESOURCE = 'http://127.0.0.1:3997/mcp';
const USERS = {
  alice: { username: 'alice', password: 'alice-pages-password', displayName: 'Alice Example' },
  bob: { username: 'bob', password: 'bob-pages-password', displayName: 'Bob Example' },
};
/** A narrow window: the pages are 34rem wide, and so are the README's pictures. */
const DOCS = { width: 640, height: 720 };
const DOC_SHOTS = [
  'login',
  'consent',
  'consent-step-up',
  'consent-reused-session',
  'callback-signed-in',
  'callback-denied',
  'callback-error',
];
const DOCS_DIR = join(process.cwd(), 'packages', 'authorization-server', 'docs', 'screenshots');

describe('browser: what the pages say (Chromium)', () => {
  let browser: Browser;
  let as: RunningAuthServer;
  let clientId: string;
  const cspViolations: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    as = await startPagesAuthServer(RESOURCE, {
      users: [USERS.alice, USERS.bob],
      resources: [{ resource: RESOURCE, name: 'Demo notes', scopes: DEMO_SCOPES }],
    });
    // RFC 8252 §7.3: a native loopback client may use any port on its registered loopback URI.
    clientId = await registerPublicClient(`${as.url}/reg`, {
      client_name: 'Notes CLI',
      application_type: 'native',
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await as?.close();
    if (process.env.UPDATE_SCREENSHOTS) {
      mkdirSync(DOCS_DIR, { recursive: true });
      for (const name of DOC_SHOTS) copyFileSync(join(SCREENSHOTS, `pages-${name}.png`), join(DOCS_DIR, `${name}.png`));
    }
  });

  async function newContext(): Promise<{ context: BrowserContext; page: Page }> {
    const { context, cspViolations: seen } = await loopbackContext(browser, DOCS);
    const page = await context.newPage();
    page.on('close', () => cspViolations.push(...seen));
    context.on('close', () => cspViolations.push(...seen));
    return { context, page };
  }

  /** Opens an authorization request whose redirect URI is the client library's loopback listener. */
  async function authorize(page: Page, scope: string, extra: Record<string, string> = {}) {
    const listener = await startLoopbackListener();
    const state = randomBytes(12).toString('base64url');
    const callback = listener.waitForCallback({ state, issuer: as.issuer, timeoutMs: 60_000 });
    callback.catch(() => undefined);
    const url = new URL(`${as.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: listener.redirectUri,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      scope,
      resource: RESOURCE,
      state,
      ...extra,
    }).toString();
    await page.goto(url.href);
    return { listener, callback };
  }

  async function signIn(page: Page, user: { username: string; password: string }) {
    await page.getByRole('heading', { name: /Sign in to/ }).waitFor();
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Authorize access' }).waitFor();
  }

  const main = (page: Page) => page.locator('main').innerText();
  const shot = (page: Page, name: string) => screenshot(page, `pages-${name}`);

  it('consent names the MCP server (name and URL) and describes every scope, offline_access too; approve → "Signed in" callback page', async () => {
    const { context, page } = await newContext();
    // OpenID Connect Core §11: offline_access counts only with prompt=consent.
    const { listener, callback } = await authorize(page, 'notes:read offline_access', { prompt: 'consent' });
    await page.getByRole('heading', { name: /Sign in to/ }).waitFor();
    await shot(page, 'login');
    await signIn(page, USERS.alice);
    const text = await main(page);
    expect(text).toContain(
      `Notes CLI unverified (this name was supplied by the application itself) wants to access Demo notes (${RESOURCE}) as Alice Example.`,
    );
    expect(text).not.toMatch(/wants to access MCP Auth Kit/);
    expect(text).toContain('Read your notes (notes:read)');
    expect(text).toMatch(/Stay signed in.*\(offline_access\)/);
    expect(text).not.toContain('unknown permission');
    // Signed in just now: no other account to switch from.
    expect(text).not.toContain('Use another account');
    await shot(page, 'consent');

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Signed in' }).waitFor();
    expect((await callback).searchParams.get('code')).toBeTruthy();
    expect(await main(page)).toContain('You can close this window and return to the application.');
    // Its own stylesheet applies (inline, allowed by its hash): the card of the AS pages.
    expect(await page.evaluate("getComputedStyle(document.querySelector('main')).borderRadius")).toBe('8px');
    await shot(page, 'callback-signed-in');
    await listener.close();

    // MCP step-up: a wider scope in the same session asks only for the new one; what was
    // allowed before is listed with its description. Deny → the callback page says so.
    const stepUp = await authorize(page, 'notes:read notes:write');
    await page.getByRole('heading', { name: 'Authorize access' }).waitFor();
    const asked = await page.locator('dt:has-text("New permissions") + dd').innerText();
    expect(asked).toContain('Create and change your notes (notes:write)');
    expect(asked).not.toContain('notes:read');
    expect(await page.locator('dt:has-text("Already allowed") + dd').innerText()).toContain('Read your notes (notes:read)');
    await shot(page, 'consent-step-up');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('heading', { name: 'Access denied' }).waitFor();
    expect((await stepUp.callback).searchParams.get('error')).toBe('access_denied');
    const denied = await main(page);
    expect(denied).toContain('the application did not get access');
    expect(denied).toContain('You can close this window');
    expect(denied).not.toContain('Signed in');
    await shot(page, 'callback-denied');
    await stepUp.listener.close();
    await context.close();
  });

  it('a reused session offers "Not you? Use another account": it ends that session and another user signs in', async () => {
    const { context, page } = await newContext();
    const first = await authorize(page, 'notes:read');
    await signIn(page, USERS.alice);
    await page.getByRole('button', { name: 'Approve' }).click();
    await first.callback;
    await first.listener.close();

    const second = await authorize(page, 'notes:read');
    await page.getByRole('heading', { name: 'Authorize access' }).waitFor();
    expect(await main(page)).toContain('as Alice Example.');
    await expect.poll(() => page.getByRole('button', { name: 'Use another account' }).isVisible()).toBe(true);
    await shot(page, 'consent-reused-session');
    // Readable at phone width, the link-styled button included: nothing wider than the viewport.
    await page.setViewportSize(PHONE);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await page.setViewportSize(DOCS);
    const aliceCookies = await context.cookies();

    await page.getByRole('button', { name: 'Use another account' }).click();
    await page.getByRole('heading', { name: /Sign in to/ }).waitFor();
    // Alice's session is ended, not just hidden: her old cookies sign nobody in.
    const { context: stale } = await loopbackContext(browser, DOCS);
    await stale.addCookies(aliceCookies);
    const stalePage = await stale.newPage();
    const account = await stalePage.goto(`${as.issuer}/account`);
    expect(account?.status()).toBe(401);
    expect(await stalePage.locator('main').innerText()).toContain('You are not signed in');
    await stale.close();

    await signIn(page, USERS.bob);
    expect(await main(page)).toContain('as Bob Example.');
    expect(await main(page)).not.toContain('Use another account');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Signed in' }).waitFor();
    expect((await second.callback).searchParams.get('code')).toBeTruthy();
    await second.listener.close();
    await page.goto(`${as.issuer}/account`);
    expect(await main(page)).toContain('as Bob Example');
    await context.close();
  });

  it('the callback page of another error shows its code and escaped description (expected iss only)', async () => {
    const { context, page } = await newContext();
    const listener = await startLoopbackListener();
    const callback = listener.waitForCallback({ state: 'st', issuer: as.issuer });
    await page.goto(
      `${listener.redirectUri}?${new URLSearchParams({
        error: 'invalid_scope',
        error_description: 'The scope <notes:admin> is not offered by this server',
        state: 'st',
        iss: as.issuer,
      })}`,
    );
    await page.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
    expect((await callback).searchParams.get('error')).toBe('invalid_scope');
    const text = await main(page);
    expect(text).toContain('The authorization server refused the request (invalid_scope).');
    expect(text).toContain('The scope <notes:admin> is not offered by this server');
    await shot(page, 'callback-error');
    await listener.close();
    await context.close();
  });

  it('no page broke its CSP (the pages carry no inline script; the callback page only its hashed style)', () => {
    expect(cspViolations).toEqual([]);
  });
});
