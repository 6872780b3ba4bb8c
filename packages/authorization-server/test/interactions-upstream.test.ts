import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, REDIRECT, registerClient, RESOURCE, startAs, type RunningAs } from './helpers/as.js';
import {
  startUpstreamIdp,
  UPSTREAM_CLIENT_ID,
  UPSTREAM_CLIENT_SECRET,
  UPSTREAM_PUBLIC_CLIENT_ID,
  type UpstreamIdp,
} from './helpers/upstream-idp.js';
import { validateConfig } from '../src/config.js';
import { type BrowserPage, HeadlessBrowser, isUrl } from '@mcp-auth-kit/test-utils';
import { openAuthorization, exchangeCode, postFormAsIs } from './helpers/flow.js';
import { recordingLogger } from './helpers/recording-logger.js';

describe('sign-in with an upstream OpenID Connect provider', () => {
  let idp: UpstreamIdp;
  let t: RunningAs;
  let clientId: string;
  const log = recordingLogger();

  beforeAll(async () => {
    idp = await startUpstreamIdp();
    t = await startAs({
      logger: log.logger,
      upstream: [
        { name: 'Closed IdP', issuer: idp.issuer, clientId: UPSTREAM_CLIENT_ID, clientSecret: UPSTREAM_CLIENT_SECRET },
        { name: 'Upstream IdP', issuer: idp.issuer, clientId: UPSTREAM_CLIENT_ID, clientSecret: UPSTREAM_CLIENT_SECRET, allowSignup: true },
        { name: 'Public IdP client', issuer: idp.issuer, clientId: UPSTREAM_PUBLIC_CLIENT_ID, allowSignup: true, scopes: ['profile'] },
      ],
    });
    await idp.configure(`${t.as.issuer}/interaction/upstream/callback`);
    clientId = (await registerClient(t.url, { client_name: 'Upstream Test Client' })).body.client_id;
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  async function loginPage(ua: HeadlessBrowser) {
    const { page, verifier } = await openAuthorization(t.url, { client_id: clientId, state: 'st' }, ua);
    if (isUrl(page)) throw new Error('expected the login page');
    return { page, verifier };
  }

  /** Clicks "Sign in with …" (button index) and signs in at the upstream IdP as `login`. */
  async function viaUpstream(ua: HeadlessBrowser, page: BrowserPage, index: number, login: string) {
    const idpPage = await ua.submit(page, { upstream: String(index) }, REDIRECT);
    if (isUrl(idpPage)) throw new Error('expected the upstream login page');
    expect(new URL(idpPage.url).origin).toBe(idp.issuer);
    return ua.submit(idpPage, { login }, REDIRECT);
  }

  /** Starts a sign-in with the first upstream provider as `login` and stops at the AS callback URL, unvisited. */
  async function upstreamCallback(ua: HeadlessBrowser, login: string): Promise<URL> {
    const { page } = await loginPage(ua);
    const idpPage = await ua.submit(page, { upstream: '1' }, REDIRECT);
    if (isUrl(idpPage)) throw new Error('expected the upstream login page');
    const callback = await ua.submit(idpPage, { login }, `${t.as.issuer}/interaction/upstream/callback`);
    if (!isUrl(callback)) throw new Error('expected the callback URL');
    return callback;
  }

  it('the login page offers "Sign in with <name>" for each configured provider, and its CSP allows the provider as form target', async () => {
    const { page } = await loginPage(new HeadlessBrowser());
    expect(page.body).toContain('Sign in with Upstream IdP');
    expect(page.body).toContain('Sign in with Closed IdP');
    expect(page.headers.get('content-security-policy')).toContain(`form-action 'self' http://127.0.0.1:7777 ${idp.issuer}`);
  });

  it('first sign-in creates a linked account (allowSignup), then consent, code and a token for that account', async () => {
    const ua = new HeadlessBrowser();
    const { page, verifier } = await loginPage(ua);
    const consent = await viaUpstream(ua, page, 1, 'carol');
    if (isUrl(consent)) throw new Error(`expected consent, got ${consent.href}`);
    expect(consent.body).toContain('Authorize access');
    expect(consent.body).toContain('Upstream carol');
    const account = await t.as.store.accounts.findByUpstreamIdentity(idp.issuer, 'carol');
    expect(account?.username).toBe('carol');
    expect(account?.passwordHash).toBeNull();
    const done = await ua.submit(consent, { action: 'approve' }, REDIRECT);
    if (!isUrl(done)) throw new Error('expected the redirect');
    const token = await exchangeCode(t.url, clientId, { callback: done, verifier });
    expect(token.status).toBe(200);
    expect(decodeJwt(token.body.access_token).payload.sub).toBe(account!.id);
    expect(log.events()).toContain('login.upstream');
  });

  it('a second sign-in maps the same upstream (iss, sub) to the same account — never by username', async () => {
    // A local "dave" exists: the upstream "dave" must not be linked to it.
    await t.as.store.accounts.create({ id: 'local-dave', username: 'dave', passwordHash: null, disabled: false });
    const first = new HeadlessBrowser();
    const c1 = await viaUpstream(first, (await loginPage(first)).page, 1, 'dave');
    expect(isUrl(c1)).toBe(false);
    const linked = await t.as.store.accounts.findByUpstreamIdentity(idp.issuer, 'dave');
    expect(linked?.id).not.toBe('local-dave');
    expect(linked?.username).toMatch(/^dave-/);
    const second = new HeadlessBrowser();
    await viaUpstream(second, (await loginPage(second)).page, 1, 'dave');
    const all = (await t.as.store.accounts.list()).filter((a) => a.upstreamIdentities?.includes(`${idp.issuer} dave`));
    expect(all).toHaveLength(1);
  });

  it('MCP security §Confused Deputy: a live upstream session never skips our per-client consent', async () => {
    const ua = new HeadlessBrowser();
    const first = await viaUpstream(ua, (await loginPage(ua)).page, 1, 'ivan');
    if (isUrl(first)) throw new Error('expected consent');
    await ua.submit(first, { action: 'approve' }, REDIRECT);
    // Another (e.g. attacker-registered) client, same browser: the upstream IdP signs the user in
    // silently, but our consent page, bound to this client_id, is still shown.
    const attackerClient = (await registerClient(t.url, { client_name: 'Innocent Looking App' })).body.client_id;
    // Forget our own session (keep the upstream IdP's): the sign-in goes through the IdP again.
    await ua.removeCookies((c) => !c.name.startsWith('idp_'));
    const { page: login } = await openAuthorization(t.url, { client_id: attackerClient, state: 'x' }, ua);
    if (isUrl(login)) throw new Error('expected the login page');
    const consent = await ua.submit(login, { upstream: '1' }, REDIRECT);
    if (isUrl(consent)) throw new Error('consent was skipped');
    expect(consent.body).toContain('Authorize access');
    expect(consent.body).toContain('Innocent Looking App');
    expect(consent.body).toContain(attackerClient);
  });

  it('a public upstream client (no secret: PKCE only) signs in too', async () => {
    const ua = new HeadlessBrowser();
    const consent = await viaUpstream(ua, (await loginPage(ua)).page, 2, 'kim');
    if (isUrl(consent)) throw new Error('expected consent');
    expect(consent.body).toContain('Authorize access');
    expect((await t.as.store.accounts.findByUpstreamIdentity(idp.issuer, 'kim'))?.username).toBe('kim');
  });

  it('without allowSignup an unknown upstream identity is refused with a clear page (no account created)', async () => {
    const ua = new HeadlessBrowser();
    const refused = await viaUpstream(ua, (await loginPage(ua)).page, 0, 'erin');
    if (isUrl(refused)) throw new Error('expected a refusal page');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('not linked to an account');
    expect(await t.as.store.accounts.findByUpstreamIdentity(idp.issuer, 'erin')).toBeUndefined();
    expect(refused.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('without allowSignup, an identity linked by the operator signs in as that existing account', async () => {
    await t.as.store.accounts.create({
      id: 'judy-local',
      username: 'judy',
      passwordHash: null,
      disabled: false,
      upstreamIdentities: [`${idp.issuer} judy-upstream`],
    });
    const ua = new HeadlessBrowser();
    const consent = await viaUpstream(ua, (await loginPage(ua)).page, 0, 'judy-upstream');
    if (isUrl(consent)) throw new Error('expected consent');
    expect(consent.status).toBe(200);
    expect(consent.body).toContain('as <strong>judy</strong>');
  });

  it('the user cancelling at the upstream provider gets a clear page, not an error', async () => {
    const ua = new HeadlessBrowser();
    const { page } = await loginPage(ua);
    // Stop at the provider's authorization endpoint to read the flow's state.
    const authorize = await ua.submit(page, { upstream: '1' }, `${idp.issuer}/auth`);
    if (!isUrl(authorize)) throw new Error('expected the upstream authorization URL');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    const state = authorize.searchParams.get('state')!;
    // The provider answers the callback with error=access_denied.
    const res = await ua.request(
      `${t.as.issuer}/interaction/upstream/callback?error=access_denied&state=${encodeURIComponent(state)}&iss=${encodeURIComponent(idp.issuer)}`,
    );
    expect(res.status).toBe(401);
    expect(res.body).toContain('was cancelled');
    expect(res.body).toContain('Back to sign-in');
  });

  it('a disabled linked account is refused', async () => {
    const ua = new HeadlessBrowser();
    await viaUpstream(ua, (await loginPage(ua)).page, 1, 'frank');
    const frank = await t.as.store.accounts.findByUpstreamIdentity(idp.issuer, 'frank');
    await t.as.store.accounts.update(frank!.id, { disabled: true });
    const again = new HeadlessBrowser();
    const refused = await viaUpstream(again, (await loginPage(again)).page, 1, 'frank');
    expect(!isUrl(refused) && refused.status).toBe(403);
  });

  it('OIDC Core §3.1.2.7 / RFC 6749 §10.12: a callback with a tampered state is refused, and the flow is single-use', async () => {
    const ua = new HeadlessBrowser();
    // Sign in at the IdP but stop before the AS callback.
    const callback = await upstreamCallback(ua, 'grace');
    const tampered = new URL(callback);
    tampered.searchParams.set('state', 'forged-state');
    const res = await ua.request(tampered.href);
    expect(res.status).toBe(502);
    expect(await t.as.store.accounts.findByUpstreamIdentity(idp.issuer, 'grace')).toBeUndefined();
    // The flow was consumed: the genuine callback replayed afterwards is refused too.
    const replay = await ua.request(callback.href);
    expect(replay.status).toBe(400);
  });

  it('a callback from another browser (no flow cookie) is refused', async () => {
    const callback = await upstreamCallback(new HeadlessBrowser(), 'heidi');
    const res = await new HeadlessBrowser().request(callback.href);
    expect(res.status).toBe(400);
    expect(res.body).toContain('another browser');
    expect(await t.as.store.accounts.findByUpstreamIdentity(idp.issuer, 'heidi')).toBeUndefined();
  });

  it('starting an upstream sign-in needs the CSRF token too', async () => {
    const ua = new HeadlessBrowser();
    const { page } = await loginPage(ua);
    const res = await postFormAsIs(ua, page, { upstream: '1' });
    expect(res.status).toBe(403);
  });

  it('an unreachable provider: a clear 502 page, and the login form still works', async () => {
    // A loopback port that was just closed: nothing listens there.
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const down = await startAs({ upstream: [{ name: 'Down IdP', issuer: `http://127.0.0.1:${port}`, clientId: 'x' }] });
    try {
      const cid = (await registerClient(down.url)).body.client_id;
      const ua = new HeadlessBrowser();
      const { page } = await openAuthorization(down.url, { client_id: cid, state: 'st' }, ua);
      if (isUrl(page)) throw new Error('expected the login page');
      const res = await ua.submit(page, { upstream: '0' }, REDIRECT);
      expect(!isUrl(res) && res.status).toBe(502);
      expect(!isUrl(res) && res.body).toContain('Down IdP is not reachable right now');
      const back = await ua.request(new URL(/href="([^"]+)"/.exec((res as BrowserPage).body.split('<body>')[1]!)![1]!, page.url).href);
      expect(back.body).toContain('name="password"');
    } finally {
      await down.close();
    }
  });

  it('config: upstream issuers must be https (http only for loopback on a loopback issuer); fields are checked', () => {
    const base = { resources: [{ resource: RESOURCE, scopes: { a: 'A' } }], storage: { kind: 'memory' as const } };
    expect(() =>
      validateConfig({ ...base, issuer: 'https://as.example', upstream: [{ name: 'X', issuer: 'http://127.0.0.1:1', clientId: 'c' }] }),
    ).toThrow(/must use https/);
    expect(() =>
      validateConfig({ ...base, issuer: 'https://as.example', upstream: [{ name: 'X', issuer: 'http://idp.example', clientId: 'c' }] }),
    ).toThrow(/must use https/);
    expect(() =>
      validateConfig({ ...base, issuer: 'http://127.0.0.1:9', upstream: [{ name: 'X', issuer: 'http://127.0.0.1:1', clientId: 'c' }] }),
    ).not.toThrow();
    expect(() =>
      validateConfig({ ...base, issuer: 'https://as.example', upstream: [{ name: '', issuer: 'https://idp.example', clientId: '' }] }),
    ).toThrow(/name: required[\s\S]*clientId: required/);
    expect(() =>
      validateConfig({
        ...base,
        issuer: 'https://as.example',
        upstream: [
          { name: 'X', issuer: 'https://idp.example', clientId: 'c' },
          { name: 'X', issuer: 'https://idp2.example', clientId: 'c' },
        ],
      }),
    ).toThrow(/duplicate/);
  });
});
