import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeadlessBrowser, isUrl, type BrowserPage } from '@mcp-auth-kit/test-utils';
import { startAttackStack, type AttackStack } from './helpers/support.js';
import { startFakeProvider, type FakeProvider } from './helpers/third-party-provider.js';
import {
  ALICE,
  ALICE_DRIVE,
  MALLORY,
  MALLORY_DRIVE,
  VAULT_CLIENT,
  VAULT_MCP,
  completeConnect,
  connectUntilCallback,
  connectionsOf,
  exchange,
  mcpAccessToken,
  twoUserVaultOptions,
} from './helpers/third-party-flow.js';

/**
 * Issue 41, the connect URL (`interaction_required`'s `connect_uri`) under attack. The identity
 * check is our own login session (MCP elicitation, "Identifying the User": the server MUST verify
 * that the user completing the flow is the user the elicitation is for; "Safe URL Handling": the
 * URL is not pre-authenticated), and the provider flow follows the MCP security best practices
 * (§OAuth State Parameter Validation: state stored only after consent, bound to the browser,
 * exact match, single use) and RFC 9207 (mix-up: `iss`).
 */
describe('attack: a connect URL completed by someone else, replayed, or answered by a forged callback', () => {
  let provider: FakeProvider;
  let stack: AttackStack;

  beforeAll(async () => {
    provider = await startFakeProvider([
      { ...ALICE_DRIVE, files: ['alice.txt'] },
      { ...MALLORY_DRIVE, files: ['mallory.txt'] },
    ]);
    stack = await startAttackStack(twoUserVaultOptions(provider));
    provider.redirectUri = `${stack.issuer}/connect/callback`;
  });
  afterAll(async () => {
    await stack?.close();
    await provider?.close();
  });

  const store = () => stack.as.server.store;

  /** A user's MCP token, browser signed in as that user, and a fresh connect URL; their drive connection removed first. */
  async function ticketFor(user: { username: string; password: string }) {
    const account = await store().accounts.findByUsername(user.username);
    if (account) await store().connections.deleteAccount(account.id);
    const { accessToken, ua } = await mcpAccessToken(stack.issuer, user, VAULT_MCP);
    const answer = await exchange(stack.issuer, VAULT_CLIENT, accessToken);
    expect(answer.body.error, answer.text).toBe('interaction_required');
    return { accessToken, ua, connectUri: String(answer.body.connect_uri) };
  }

  const tokenRequests = () =>
    provider.requests.filter((r) => r.path === '/token' && r.body.includes('grant_type=authorization_code')).length;

  it('the victim’s link opened by another signed-in user: refused (403), nothing linked, and the victim’s link still works for the victim', async () => {
    const alice = await ticketFor(ALICE);
    const mallory = await ticketFor(MALLORY);
    const page = (await mallory.ua.follow(alice.connectUri, () => false)) as BrowserPage;
    expect(page.status).toBe(403);
    expect(page.body).toContain('This link is for another account');
    expect(page.body).not.toContain('value="connect"');
    // the attacker posts the confirmation anyway (with a CSRF token of that page): still refused
    const forced = (await mallory.ua.submit(page, { action: 'connect' }, () => false)) as BrowserPage;
    expect(forced.status).toBe(403);
    expect(provider.requests.some((r) => r.path.startsWith('/authorize') && r.headers.cookie?.includes('mallory'))).toBe(false);
    expect(await connectionsOf(store(), 'alice')).toEqual([]);
    expect(await connectionsOf(store(), 'mallory')).toEqual([]);
    // the link was not the attacker's to use up: its owner connects with it
    const done = await completeConnect(alice.connectUri, alice.ua, { providerUser: ALICE_DRIVE, provider });
    expect(done.body).toContain('Drive is connected');
    expect(await connectionsOf(store(), 'alice')).toEqual(['drive']);
    expect(await connectionsOf(store(), 'mallory')).toEqual([]);
  });

  it('the attacker’s link sent to a signed-in victim (phishing): refused, the victim’s drive is not attached to the attacker', async () => {
    const alice = await ticketFor(ALICE);
    const mallory = await ticketFor(MALLORY);
    const page = (await alice.ua.follow(mallory.connectUri, () => false)) as BrowserPage;
    expect(page.status).toBe(403);
    const forced = (await alice.ua.submit(page, { action: 'connect' }, () => false)) as BrowserPage;
    expect(forced.status).toBe(403);
    expect(await connectionsOf(store(), 'mallory')).toEqual([]);
    expect(await connectionsOf(store(), 'alice')).toEqual([]);
    const answer = await exchange(stack.issuer, VAULT_CLIENT, mallory.accessToken);
    expect(answer.body.error).toBe('interaction_required');
  });

  it('a victim’s link opened signed out, and the login page used with another account: refused after the sign-in, nothing linked', async () => {
    const alice = await ticketFor(ALICE);
    const fresh = new HeadlessBrowser();
    const page = await completeConnect(alice.connectUri, fresh, { asUser: MALLORY, providerUser: MALLORY_DRIVE, provider });
    expect(page.status).toBe(403);
    expect(page.body).toContain('This link is for another account');
    expect(await connectionsOf(store(), 'alice')).toEqual([]);
    expect(await connectionsOf(store(), 'mallory')).toEqual([]);
    // "Sign in with another account" on the refusal page: signing in as the right user connects
    const switched = (await fresh.submit(page, { action: 'switch' }, () => false)) as BrowserPage;
    const login = (await fresh.submit(switched, { ...ALICE, action: 'login' }, () => false)) as BrowserPage;
    expect(login.body).toContain('value="connect"');
    const atProvider = (await fresh.submit(login, { action: 'connect' }, () => false)) as BrowserPage;
    const connected = (await fresh.submit(atProvider, { ...ALICE_DRIVE, decision: 'allow' }, () => false)) as BrowserPage;
    expect(connected.body).toContain('Drive is connected');
    expect(await connectionsOf(store(), 'alice')).toEqual(['drive']);
  });

  it('replay of a used connect URL: expired or already used (GET and POST), nothing changes', async () => {
    const alice = await ticketFor(ALICE);
    await completeConnect(alice.connectUri, alice.ua, { providerUser: ALICE_DRIVE, provider });
    const again = (await alice.ua.follow(alice.connectUri, () => false)) as BrowserPage;
    expect(again.status).toBe(400);
    expect(again.body).toContain('expired or was already used');
    const other = (await new HeadlessBrowser().follow(alice.connectUri, () => false)) as BrowserPage;
    expect(other.status).toBe(400);
    // garbage and unknown tickets alike
    for (const bad of ['x', 'A'.repeat(43), '..%2F..%2Faccount']) {
      const res = (await alice.ua.follow(`${stack.issuer}/connect/${bad}`, () => false)) as BrowserPage;
      expect(res.status, bad).toBe(400);
    }
  });

  it('replay of the provider’s callback: the flow is taken by the first, the second connects nothing and redeems no code', async () => {
    const alice = await ticketFor(ALICE);
    const callback = await connectUntilCallback(alice.connectUri, alice.ua, { providerUser: ALICE_DRIVE });
    const before = tokenRequests();
    const first = (await alice.ua.follow(callback, () => false)) as BrowserPage;
    expect(first.body).toContain('Drive is connected');
    expect(tokenRequests()).toBe(before + 1);
    const second = (await alice.ua.follow(callback, () => false)) as BrowserPage;
    expect(second.status).toBe(400);
    expect(tokenRequests()).toBe(before + 1);
  });

  it('a callback with another state: refused, and the flow is used up (the right state afterwards is refused too)', async () => {
    const alice = await ticketFor(ALICE);
    const callback = await connectUntilCallback(alice.connectUri, alice.ua, { providerUser: ALICE_DRIVE });
    const forged = new URL(callback);
    forged.searchParams.set('state', 'A'.repeat(43));
    const before = tokenRequests();
    const refused = (await alice.ua.follow(forged, () => false)) as BrowserPage;
    // RFC 6749 §10.12: the browser's request is at fault, not the provider: a 4xx
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('does not belong to the connection you started');
    expect((await alice.ua.follow(callback, () => false)) as BrowserPage).toMatchObject({ status: 400 });
    expect(tokenRequests()).toBe(before);
    expect(await connectionsOf(store(), 'alice')).toEqual([]);
  });

  it('the attacker’s callback (its code and state, its provider account) delivered into the victim’s browser: refused, no code redeemed', async () => {
    const mallory = await ticketFor(MALLORY);
    const callback = await connectUntilCallback(mallory.connectUri, mallory.ua, { providerUser: MALLORY_DRIVE });
    const alice = await ticketFor(ALICE);
    const before = tokenRequests();
    // the victim without a flow of her own, then with one in progress
    expect(((await alice.ua.follow(callback, () => false)) as BrowserPage).status).toBe(400);
    const own = await connectUntilCallback(alice.connectUri, alice.ua, { providerUser: ALICE_DRIVE });
    expect(((await alice.ua.follow(callback, () => false)) as BrowserPage).status).toBe(400);
    expect(tokenRequests()).toBe(before);
    expect(await connectionsOf(store(), 'alice')).toEqual([]);
    expect(await connectionsOf(store(), 'mallory')).toEqual([]);
    // the victim's own flow was used up by that answer: her real callback connects nothing
    expect(((await alice.ua.follow(own, () => false)) as BrowserPage).status).toBe(400);
  });

  it('RFC 9207: an authorization response with a wrong iss, or none from a provider that says it sends one, is refused before the code is redeemed', async () => {
    for (const iss of ['wrong', 'none'] as const) {
      provider.iss = iss;
      try {
        const alice = await ticketFor(ALICE);
        const before = tokenRequests();
        const page = await completeConnect(alice.connectUri, alice.ua, { providerUser: ALICE_DRIVE, provider });
        expect(page.status, iss).toBe(502);
        expect(page.body).not.toContain('is connected');
        expect(tokenRequests(), iss).toBe(before);
        expect(await connectionsOf(store(), 'alice')).toEqual([]);
      } finally {
        provider.iss = 'right';
      }
    }
  });

  it('the user signs out between the confirmation and the callback: the state was for that session, nothing is connected', async () => {
    const alice = await ticketFor(ALICE);
    const callback = await connectUntilCallback(alice.connectUri, alice.ua, { providerUser: ALICE_DRIVE });
    await alice.ua.removeCookies((c) => c.name.startsWith('_session'));
    const page = (await alice.ua.follow(callback, () => false)) as BrowserPage;
    expect(page.status).toBe(403);
    expect(await connectionsOf(store(), 'alice')).toEqual([]);
  });

  it('the confirmation needs its CSRF token; the pages are not framable and not cached (MCP security §Consent UI)', async () => {
    const alice = await ticketFor(ALICE);
    const page = (await alice.ua.follow(alice.connectUri, () => false)) as BrowserPage;
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get('content-security-policy')).toMatch(new RegExp(`form-action 'self' ${provider.issuer}`));
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toContain('no-store');
    const forged = await alice.ua.request(alice.connectUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'connect', csrf: 'guessed' }),
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
    // the ticket was not used up by the forged post
    expect((await completeConnect(alice.connectUri, alice.ua, { providerUser: ALICE_DRIVE, provider })).body).toContain(
      'Drive is connected',
    );
  });

  it('what the provider sends back is escaped on the page (an error code with markup)', async () => {
    const alice = await ticketFor(ALICE);
    const callback = await connectUntilCallback(alice.connectUri, alice.ua, { providerUser: ALICE_DRIVE });
    const forged = new URL(callback);
    forged.searchParams.delete('code');
    forged.searchParams.set('error', '<img src=x onerror=alert(1)>');
    const page = (await alice.ua.follow(forged, () => false)) as BrowserPage;
    expect(isUrl(page as never)).toBe(false);
    expect(page.body).not.toContain('<img src=x');
    expect(page.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(await connectionsOf(store(), 'alice')).toEqual([]);
  });
});
