/**
 * The operator console in Chromium (issue 44 "done when"): an operator signs in through the
 * login page, sets the client-document policy and approves a waiting CIMD client (whose user
 * then completes the authorization), disables a user (whose token is then refused by a resource
 * server using introspection, RFC 7662 §2.2, and by one using the revocation signal), revokes a
 * grant, rotates a key, and finds each of those changes in the audit view. Every console page
 * passes axe-core (no serious or critical violation), fits a phone-sized screen, breaks no CSP,
 * and is screenshotted at desktop and phone widths (`npm run screenshots` copies them to
 * packages/authorization-server/docs/screenshots/).
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createClient } from 'redis';
import { DEMO_SCOPES, startAuthServer, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { createRedisRevocationList, type RedisRevocationList } from '@mcp-auth-kit/resource-server/redis';
import { createLoopbackCertificate, type LoopbackCertificate } from '@mcp-auth-kit/testing';
import { HeadlessBrowser, isUrl, pkcePair } from '@mcp-auth-kit/test-utils';
import { DESKTOP, PHONE, SCREENSHOTS, launchChromium, loopbackContext, screenshot, startRedirectListener } from './harness.js';
import { seriousViolations, type AxeViolation } from './axe.js';
import { listenProtectedEndpoint, post, type ProtectedEndpoint } from '../faults/helpers/resource-server.js';
import { REDIS_URL, redisPrefix } from '../helpers/redis.js';

const OPERATOR = { username: 'olivia', password: 'olivia-console-password', displayName: 'Olivia Operator' };
const ALICE = { username: 'alice', password: 'alice-console-password', displayName: 'Alice Example' };
const BOB = { username: 'bob', password: 'bob-console-password', displayName: 'Bob Example' };
const CAROL = { username: 'carol', password: 'carol-console-password', displayName: 'Carol Example' };
const RS_CLIENT = 'notes-introspector';
const RS_SECRET = randomBytes(24).toString('base64url');
const NATIVE_REDIRECT = 'http://127.0.0.1/callback';
const DOCS_DIR = join(process.cwd(), 'packages', 'authorization-server', 'docs', 'screenshots');

describe('browser: the operator console (Chromium)', () => {
  let browser: Browser;
  let as: RunningAuthServer;
  let cert: LoopbackCertificate;
  let cimdHost: HttpsServer;
  let cimdClientId: string;
  let introspecting: ProtectedEndpoint;
  let signalled: ProtectedEndpoint;
  let revocationList: RedisRevocationList;
  const redis = redisPrefix('console-browser');
  const redisClient = createClient({ url: REDIS_URL });
  redisClient.on('error', () => {});
  let subscriber: typeof redisClient;
  let operator: { context: BrowserContext; page: Page };
  const cspViolations: string[] = [];
  const axe: Record<string, AxeViolation[]> = {};

  beforeAll(async () => {
    browser = await launchChromium();
    cert = await createLoopbackCertificate();
    cimdHost = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      if (req.url !== '/notes-desktop.json') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: cimdClientId,
          client_name: 'Notes Desktop',
          redirect_uris: [NATIVE_REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((r) => cimdHost.listen(0, '127.0.0.1', r));
    cimdClientId = `https://127.0.0.1:${(cimdHost.address() as AddressInfo).port}/notes-desktop.json`;
    [introspecting, signalled] = await Promise.all([listenProtectedEndpoint(), listenProtectedEndpoint()]);
    as = await startAuthServer({
      port: 0,
      host: '127.0.0.1',
      resource: introspecting.resource,
      storage: { kind: 'memory' },
      logger: silentLogger,
      cimdAllowPrivateNetwork: true,
      redisUrl: REDIS_URL,
      redisPrefix: redis.prefix,
      authorizationServer: {
        serviceName: 'Acme MCP',
        users: [OPERATOR, ALICE, BOB, CAROL],
        console: { path: '/console' },
        cimd: { allowPrivateNetwork: true, extraCaCertificates: cert.cert },
        resources: [
          {
            resource: introspecting.resource,
            name: 'Team notes',
            scopes: DEMO_SCOPES,
            defaultScopes: ['notes:read'],
            introspectionClients: [RS_CLIENT],
          },
          { resource: signalled.resource, name: 'Team calendar', scopes: DEMO_SCOPES, defaultScopes: ['notes:read'] },
        ],
        clients: [
          {
            client_id: RS_CLIENT,
            client_secret: RS_SECRET,
            client_name: 'Notes resource server',
            grant_types: [],
            response_types: [],
            redirect_uris: [],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        registration: { rateLimit: false },
      },
    });
    const accounts = as.server.store.accounts;
    await accounts.update((await accounts.findByUsername(OPERATOR.username))!.id, { admin: true });
    // One resource server asks the AS about every token (cache off); the other hears of ended grants through Redis.
    introspecting.protect(as.issuer, {
      cache: false,
      introspection: { endpoint: `${as.issuer}/token/introspection`, clientId: RS_CLIENT, clientSecret: RS_SECRET, introspectJwt: true },
    });
    await redisClient.connect();
    subscriber = redisClient.duplicate();
    subscriber.on('error', () => {});
    await subscriber.connect();
    revocationList = await createRedisRevocationList({ client: redisClient, subscriber, prefix: redis.prefix, resyncIntervalMs: 100 });
    signalled.protect(as.issuer, { revocation: revocationList });
    operator = await newPage();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await revocationList?.close();
    subscriber?.destroy();
    redisClient.destroy();
    await Promise.all([introspecting?.close(), signalled?.close()]);
    await as?.close();
    cimdHost?.closeAllConnections();
    cimdHost?.close();
    await redis.drop();
    if (process.env.UPDATE_SCREENSHOTS) {
      mkdirSync(DOCS_DIR, { recursive: true });
      for (const name of readdirSync(SCREENSHOTS).filter((n) => n.startsWith('console-') || n.startsWith('account-')))
        copyFileSync(join(SCREENSHOTS, name), join(DOCS_DIR, name));
    }
  });

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const { context, cspViolations: seen } = await loopbackContext(browser, DESKTOP);
    context.on('close', () => cspViolations.push(...seen));
    return { context, page: await context.newPage() };
  }

  const main = (page: Page) => page.locator('main').innerText();

  /** Checks the page (axe, phone width) and screenshots it at desktop and phone widths. */
  async function inspect(page: Page, name: string): Promise<void> {
    axe[name] = await seriousViolations(page);
    await screenshot(page, `${name}-desktop`);
    await page.setViewportSize(PHONE);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth'), `${name} at phone width`).toBeLessThanOrEqual(PHONE.width);
    axe[`${name} (phone)`] = await seriousViolations(page);
    await screenshot(page, `${name}-phone`);
    await page.setViewportSize(DESKTOP);
  }

  /** Opens a console section from the navigation (keyboard-reachable links). */
  async function open(section: string, heading: string | RegExp): Promise<void> {
    await operator.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: section, exact: true }).click();
    await operator.page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  }

  /** Authorization code + PKCE for `user` at `resource` over plain HTTP (login and consent pages). */
  async function tokensFor(
    user: typeof ALICE,
    resource: string,
  ): Promise<{ access_token: string; refresh_token?: string; clientId: string }> {
    const reg = await fetch(`${as.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: `${user.displayName}'s notes app`,
        redirect_uris: [NATIVE_REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const { verifier, challenge } = pkcePair();
    const auth = new URL(`${as.issuer}/auth`);
    auth.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: NATIVE_REDIRECT,
      scope: 'notes:read offline_access',
      prompt: 'consent',
      resource,
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    const ua = new HeadlessBrowser();
    const stop = (url: URL) => url.href.startsWith(NATIVE_REDIRECT);
    let end = await ua.follow(auth, stop);
    if (!isUrl(end)) end = await ua.submit(end, { username: user.username, password: user.password, action: 'login' }, stop);
    if (!isUrl(end)) end = await ua.submit(end, { action: 'approve' }, stop);
    if (!isUrl(end)) throw new Error(`authorization stopped at ${end.url} (${end.status})`);
    const res = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: String(end.searchParams.get('code')),
        redirect_uri: NATIVE_REDIRECT,
        client_id: clientId,
        code_verifier: verifier,
        resource,
      }),
    });
    const tokens = (await res.json()) as { access_token: string; refresh_token?: string };
    expect(tokens.access_token).toBeTruthy();
    return { ...tokens, clientId };
  }

  /** Polls until the resource server answers `status` (the revocation signal travels through Redis). */
  async function expectStatus(resource: string, token: string, status: number): Promise<void> {
    const deadline = Date.now() + 5000;
    while ((await post(resource, token)).status !== status && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await post(resource, token)).status).toBe(status);
  }

  it('an operator signs in through the login page (the sign-in prompt and the login page are checked too)', async () => {
    const { page } = operator;
    await page.goto(`${as.issuer}/console`);
    await page.getByRole('heading', { name: 'Operator console' }).waitFor();
    await inspect(page, 'console-sign-in');
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /Sign in to Acme MCP/ }).waitFor();
    expect(await main(page)).toContain('Sign in to the operator console.');
    await inspect(page, 'console-login');
    await page.getByLabel('Username').fill(OPERATOR.username);
    await page.getByLabel('Password').fill(OPERATOR.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    expect(await page.locator('header').innerText()).toContain('Signed in as Olivia Operator');
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/?$/);
  });

  it('sets the client-document policy and approves a waiting CIMD client, whose user then completes the authorization', async () => {
    await open('Client documents', 'Client documents (CIMD)');
    await operator.page.getByLabel(/Clients from other hosts wait/).check();
    await operator.page.getByRole('button', { name: 'Save policy' }).click();
    await operator.page.getByText('Policy saved.').waitFor();

    // Alice's app comes by its metadata document: she is told to wait, not shown an error.
    const alice = await newPage();
    const listener = await startRedirectListener();
    const state = randomBytes(8).toString('hex');
    const auth = new URL(`${as.issuer}/auth`);
    auth.search = new URLSearchParams({
      response_type: 'code',
      client_id: cimdClientId,
      redirect_uri: listener.redirectUri,
      scope: 'notes:read',
      resource: introspecting.resource,
      state,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    }).toString();
    await alice.page.goto(auth.href);
    await alice.page
      .getByText(/waiting for approval/i)
      .first()
      .waitFor();
    await screenshot(alice.page, 'console-user-waiting');

    await operator.page.reload();
    const queue = await main(operator.page);
    expect(queue).toContain('Notes Desktop');
    expect(queue).toContain(cimdClientId);
    await inspect(operator.page, 'console-cimd');
    await operator.page.getByRole('button', { name: 'Approve Notes Desktop' }).click();
    await operator.page.getByText('Client approved').waitFor();

    await alice.page.goto(auth.href);
    await alice.page.getByLabel('Username').fill(ALICE.username);
    await alice.page.getByLabel('Password').fill(ALICE.password);
    await alice.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await alice.page.getByRole('button', { name: 'Approve' }).click();
    await alice.page.getByRole('heading', { name: 'Callback received' }).waitFor();
    const callback = new URL(alice.page.url());
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('code')).toBeTruthy();
    await listener.close();
    await alice.context.close();
  });

  it('disables a user: the resource server using introspection and the one using the revocation signal refuse their tokens', async () => {
    const notes = await tokensFor(BOB, introspecting.resource);
    const calendar = await tokensFor(BOB, signalled.resource);
    expect((await post(introspecting.resource, notes.access_token)).status).toBe(200);
    expect((await post(signalled.resource, calendar.access_token)).status).toBe(200);

    await open('Users', 'Users');
    await operator.page.getByLabel('Search by username or name').fill('bob');
    await operator.page.getByRole('button', { name: 'Search' }).click();
    await operator.page.getByRole('link', { name: 'bob', exact: true }).click();
    await operator.page.getByRole('heading', { name: /^bob/, level: 1 }).waitFor();
    expect(await main(operator.page)).toContain(notes.clientId);
    await inspect(operator.page, 'console-user');
    await operator.page.getByRole('button', { name: 'Disable bob' }).click();
    await operator.page.getByText('User disabled').waitFor();

    // RFC 7662 §2.2: the token of a disabled user is not active; the signal reaches the other server.
    await expectStatus(introspecting.resource, notes.access_token, 401);
    await expectStatus(signalled.resource, calendar.access_token, 401);
  });

  it('revokes a grant: its refresh token is refused', async () => {
    const carol = await tokensFor(CAROL, introspecting.resource);
    await open('Grants', 'Grants');
    await operator.page.getByLabel('User').fill('carol');
    await operator.page.getByRole('button', { name: 'Filter' }).click();
    await inspect(operator.page, 'console-grants');
    await operator.page.getByRole('button', { name: "Revoke carol's grant to Carol Example's notes app" }).click();
    await operator.page.getByText('Grant revoked').waitFor();
    const refresh = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: carol.refresh_token!, client_id: carol.clientId }),
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe('invalid_grant');
    await expectStatus(introspecting.resource, carol.access_token, 401);
  });

  it('rotates the signing key: the published next key becomes the signer', async () => {
    const before = await as.server.store.keys.signingKeys();
    const next = before.find((k) => k.status === 'next')?.jwk.kid;
    await open('Keys', 'Keys');
    await inspect(operator.page, 'console-keys');
    await operator.page.getByRole('button', { name: 'Rotate signing keys' }).click();
    await operator.page.getByText('Signing keys rotated').waitFor();
    const after = await as.server.store.keys.signingKeys();
    const current = after.find((k) => k.status === 'current')?.jwk.kid;
    expect(current).not.toBe(before.find((k) => k.status === 'current')?.jwk.kid);
    if (next) expect(current).toBe(next);
    expect(await main(operator.page)).toContain(String(current));
  });

  it('finds each change in the audit view, with the operator as the actor', async () => {
    const operatorId = (await as.server.store.accounts.findByUsername(OPERATOR.username))!.id;
    await open('Audit log', 'Audit log');
    await inspect(operator.page, 'console-audit');
    const search = async (fields: Record<string, string>) => {
      await operator.page.goto(`${as.issuer}/console/audit?${new URLSearchParams(fields)}`);
      return operator.page.locator('tbody tr').allInnerTexts();
    };
    for (const [event, extra] of [
      ['cimd.policy_changed', {}],
      ['cimd.client_approved', { client: cimdClientId }],
      ['account.disabled', { user: 'bob' }],
      ['grant.revoked', { user: 'carol' }],
      ['keys.rotated', {}],
    ] as const) {
      const rows = await search({ event, actor: operatorId, ...extra });
      expect(rows.length, event).toBeGreaterThanOrEqual(1);
      expect(rows[0]).toContain(event);
      // The operator, by name (the link searches by their sub).
      expect(rows[0]).toContain(OPERATOR.username);
    }
    // By user, through the form (keyboard: fill and press Enter).
    await operator.page.goto(`${as.issuer}/console/audit`);
    await operator.page.getByLabel('User (username or sub)').fill('bob');
    await operator.page.getByLabel('User (username or sub)').press('Enter');
    await operator.page.locator('tbody tr').first().waitFor();
    const bobRows = await operator.page.locator('tbody tr').allInnerTexts();
    expect(bobRows.length).toBeGreaterThanOrEqual(3);
    expect(bobRows.every((row) => row.includes(BOB.username))).toBe(true);
    expect(bobRows.some((row) => row.includes('account.disabled'))).toBe(true);
  });

  it('the other pages pass the same checks (overview, clients, users)', async () => {
    for (const [section, heading, name] of [
      ['Overview', 'Overview', 'console-overview'],
      ['Clients', 'Clients', 'console-clients'],
      ['Users', 'Users', 'console-users'],
    ] as const) {
      await open(section, heading);
      await inspect(operator.page, name);
    }
    expect(await main(operator.page)).not.toMatch(/\$scrypt|password_hash|client_secret/i);
  });

  it("the user's account page: connected apps (what each may do, last use, revoke) and recent sign-ins", async () => {
    const { page, context } = await newPage();
    const reg = await fetch(`${as.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Notes CLI',
        application_type: 'native',
        redirect_uris: [NATIVE_REDIRECT],
        token_endpoint_auth_method: 'none',
      }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const listener = await startRedirectListener();
    const auth = new URL(`${as.issuer}/auth`);
    auth.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: listener.redirectUri,
      scope: 'notes:read',
      resource: introspecting.resource,
      state: 'account',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    }).toString();
    await page.goto(auth.href);
    await page.getByLabel('Username').fill(ALICE.username);
    await page.getByLabel('Password').fill(ALICE.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Callback received' }).waitFor();
    await listener.close();

    await page.goto(`${as.issuer}/account`);
    await page.getByRole('heading', { name: 'Connected apps', level: 1 }).waitFor();
    const text = await main(page);
    expect(text).toContain('Notes CLI');
    expect(text).toContain('Read your notes (notes:read)');
    expect(text).toMatch(/Last used\s*(\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC|Not yet)/);
    await page.getByRole('heading', { name: 'Recent sign-ins' }).waitFor();
    await inspect(page, 'account-connected-apps');
    await page.getByRole('button', { name: 'Revoke access of Notes CLI' }).click();
    await page.getByText('Access revoked.').waitFor();
    expect(await main(page)).not.toContain('Revoke access of Notes CLI');
    await context.close();
  });

  it('keyboard: the first Tab reaches "Skip to content", then the navigation; Sign out ends the session', async () => {
    const { page } = operator;
    await page.goto(`${as.issuer}/console/keys`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(new URL(page.url()).hash).toBe('#content');
    await page.goto(`${as.issuer}/console/keys`);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Overview');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    await page.goto(`${as.issuer}/console/users`);
    await page.getByRole('heading', { name: 'Operator console' }).waitFor();
    expect(await main(page)).not.toContain(BOB.username);
  });

  it('no serious accessibility violation, no CSP violation', async () => {
    await operator.context.close();
    expect(Object.entries(axe).filter(([, v]) => v.length)).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
