/**
 * What the consent page says (issue 22): the resource the user grants access to — the MCP
 * server, by its configured display name and URL, not the AS's own name — every scope by its
 * description (resource scopes, OpenID Connect scopes with defaults or `scopeDescriptions`,
 * unknown ones marked), and "Not you? Use another account" for a reused browser session, which
 * really ends that session.
 */
import { describe, expect, it } from 'vitest';
import { addAccount, REDIRECT, registerClient, RESOURCE, type RunningAs, type TestConfig } from './helpers/as.js';
import type { AuthorizationServerConfig } from '../src/index.js';
import { validateConfig } from '../src/ops/index.js';
import { consentPage, type ConsentView } from '../src/interactions/consent-page.js';
import { createScopeText, DEFAULT_SCOPE_DESCRIPTIONS } from '../src/interactions/scope-text.js';
import { OIDC_SCOPES } from '../src/provider/provider.js';
import { ResourceRegistry } from '../src/tokens/resources.js';
import { type BrowserPage, HeadlessBrowser, isUrl } from '@mcp-auth-kit/test-utils';
import { openAuthorization, postFormAsIs } from './helpers/flow.js';
import { startAsForDescribe } from './helpers/for-describe.js';

const OTHER = 'http://127.0.0.1:3998/mcp';

describe('consent page: resource names, scope descriptions, "Not you?"', () => {
  let t: RunningAs;
  let clientId: string;
  const config: TestConfig = {
    serviceName: 'Example Auth',
    resources: [
      {
        resource: RESOURCE,
        name: 'Notes <MCP> server',
        scopes: { 'notes:read': 'Read your notes', 'notes:write': 'Change your notes' },
      },
      { resource: OTHER, scopes: { 'files:read': 'Read your files' } },
    ],
    scopeDescriptions: { profile: 'See your display name' },
  };
  startAsForDescribe(config, async (started) => {
    t = started;
    clientId = (await registerClient(t.url, { client_name: 'Text Client', scope: 'openid profile offline_access' })).body.client_id;
    await addAccount(t, 'bob-id', 'bob', { displayName: 'Bob Other' });
    // Issue 46 F4/F5: a display name stored as it came (an operator's --display-name, an older
    // version): U+3000 padding and a stack of combining marks.
    await addAccount(t, 'zed-id', 'zed', { displayName: `Zed${'\u3000'.repeat(150)}Q${'\u0336'.repeat(8)}` });
  });

  async function start(ua: HeadlessBrowser, scope: string, resource = RESOURCE, prompt?: string, client = clientId) {
    const { page } = await openAuthorization(t.url, { client_id: client, scope, resource, state: 'st', prompt }, ua);
    if (isUrl(page)) throw new Error(`unexpected redirect ${page.href}`);
    return page;
  }

  async function submit(ua: HeadlessBrowser, page: BrowserPage, fields: Record<string, string>): Promise<BrowserPage> {
    const next = await ua.submit(page, fields, REDIRECT);
    if (isUrl(next)) throw new Error(`unexpected redirect ${next.href}`);
    return next;
  }

  const text = (html: string) =>
    html
      .replace(/<\/?(?:dt|dd|li|p|h1|h2|br|ul|dl|div|title|form)\b[^>]*>/g, ' ')
      .replace(/<[^>]+>/g, '')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/\s+/g, ' ');

  it('names the resource (display name, escaped, and URL), not the authorization server', async () => {
    const ua = new HeadlessBrowser();
    const consent = await submit(ua, await start(ua, 'notes:read'), { username: 'alice', password: 'alice-password', action: 'login' });
    expect(text(consent.body)).toContain(
      `Text Client unverified (this name was supplied by the application itself) wants to access Notes <MCP> server (${RESOURCE}) as alice.`,
    );
    expect(consent.body).toContain('<strong>Notes &lt;MCP&gt; server</strong>');
    expect(consent.body).not.toContain('<MCP>');
    expect(text(consent.body)).not.toMatch(/wants to access Example Auth/);
  });

  it('a resource without a display name is named by its URL', async () => {
    const ua = new HeadlessBrowser();
    const consent = await submit(ua, await start(ua, 'files:read', OTHER), {
      username: 'alice',
      password: 'alice-password',
      action: 'login',
    });
    expect(text(consent.body)).toContain(`wants to access ${OTHER} as alice.`);
    expect(text(consent.body)).toContain('Read your files (files:read)');
  });

  it('OpenID Connect scopes have descriptions (defaults, or scopeDescriptions), offline_access included', async () => {
    const ua = new HeadlessBrowser();
    // OpenID Connect Core §11: offline_access only counts with prompt=consent.
    const consent = await submit(ua, await start(ua, 'openid profile offline_access notes:read', RESOURCE, 'consent'), {
      username: 'alice',
      password: 'alice-password',
      action: 'login',
    });
    const page = text(consent.body);
    expect(page).toContain(`Your account ${DEFAULT_SCOPE_DESCRIPTIONS.openid} (openid)`);
    expect(page).toContain('See your display name (profile)');
    expect(page).toContain(`${DEFAULT_SCOPE_DESCRIPTIONS.offline_access} (offline_access)`);
    expect(page).toContain('Read your notes (notes:read)');
    expect(page).not.toContain('unknown permission');
  });

  it('"Not you?" appears only for a reused session; it ends that session and another user signs in', async () => {
    const ua = new HeadlessBrowser();
    const first = await submit(ua, await start(ua, 'notes:read'), { username: 'alice', password: 'alice-password', action: 'login' });
    // Just signed in: nobody else's session to leave.
    expect(first.body).not.toContain('Use another account');
    const approved = await ua.submit(first, { action: 'approve' }, REDIRECT);
    expect(isUrl(approved) && approved.searchParams.get('code')).toBeTruthy();

    // A later request in the same browser reuses alice's session (a loopback client is asked again).
    const reused = await start(ua, 'notes:read');
    expect(text(reused.body)).toContain('as alice.');
    expect(text(reused.body)).toContain('Not you? Use another account');
    const aliceSession = ua.cookies.filter((c) => c.name.startsWith('_session')).map((c) => ({ ...c }));
    expect(aliceSession.length).toBeGreaterThan(0);

    const login = await submit(ua, reused, { action: 'switch-account' });
    expect(login.status).toBe(200);
    expect(login.body).toContain('name="password"');
    // alice's session is gone from the store: its cookie signs nobody in any more.
    const stale = new HeadlessBrowser();
    stale.cookies.push(...aliceSession);
    expect((await stale.request(`${t.url}/account`)).status).toBe(401);

    const bob = await submit(ua, login, { username: 'bob', password: 'bob-password', action: 'login' });
    expect(text(bob.body)).toContain('as Bob Other.');
    expect(bob.body).not.toContain('Use another account');
    const code = await ua.submit(bob, { action: 'approve' }, REDIRECT);
    expect(isUrl(code) && code.searchParams.get('code')).toBeTruthy();
    const account = await ua.request(`${t.url}/account`);
    expect(account.status).toBe(200);
    expect(text(account.body)).toContain('as Bob Other.');
  });

  it('a display name is shown through the one display rule on the consent and account pages (white space collapsed, at most 3 marks per base)', async () => {
    const ua = new HeadlessBrowser();
    const consent = await submit(ua, await start(ua, 'notes:read'), { username: 'zed', password: 'zed-password', action: 'login' });
    expect(text(consent.body)).toContain(`as Zed Q${'\u0336'.repeat(3)}.`);
    expect(consent.body).not.toMatch(/\u3000|\u0336{4}/u);
    const code = await ua.submit(consent, { action: 'approve' }, REDIRECT);
    expect(isUrl(code) && code.searchParams.get('code')).toBeTruthy();
    const account = await ua.request(`${t.url}/account`);
    expect(account.status).toBe(200);
    expect(text(account.body)).toContain(`as Zed Q${'\u0336'.repeat(3)}.`);
    expect(account.body).not.toMatch(/\u3000|\u0336{4}/u);
  });

  it('a client_name is shown through the same rule on the login, consent and account pages (white space collapsed, at most 3 marks per base)', async () => {
    const padded = (await registerClient(t.url, { client_name: `Evil${'\u3000'.repeat(150)}App${'\u0336'.repeat(8)}`, scope: 'openid' }))
      .body.client_id;
    const ua = new HeadlessBrowser();
    const login = await start(ua, 'notes:read', RESOURCE, undefined, padded);
    expect(login.body).toContain(`Evil App${'\u0336'.repeat(3)}</strong>`);
    expect(login.body).not.toMatch(/\u3000|\u0336{4}/u);
    const consent = await submit(ua, login, { username: 'alice', password: 'alice-password', action: 'login' });
    expect(consent.body).toContain(`Evil App${'\u0336'.repeat(3)}</strong>`);
    expect(consent.body).not.toMatch(/\u3000|\u0336{4}/u);
    await ua.submit(consent, { action: 'approve' }, REDIRECT);
    const account = await ua.request(`${t.url}/account`);
    expect(account.body).toContain(`Revoke access of Evil App${'\u0336'.repeat(3)}`);
    expect(account.body).not.toMatch(/\u3000|\u0336{4}/u);
  });

  it('switch-account without the form token is refused (403) and the session stays', async () => {
    const ua = new HeadlessBrowser();
    const first = await submit(ua, await start(ua, 'notes:read'), { username: 'alice', password: 'alice-password', action: 'login' });
    await ua.submit(first, { action: 'approve' }, REDIRECT);
    const reused = await start(ua, 'notes:read');
    const forged = await postFormAsIs(ua, reused, { action: 'switch-account', csrf: 'forged' });
    expect(forged.status).toBe(403);
    expect((await ua.request(`${t.url}/account`)).status).toBe(200);
  });

  it('switch-account on the login page is refused (nothing to switch from)', async () => {
    const ua = new HeadlessBrowser();
    const login = await start(ua, 'notes:read');
    const refused = await ua.submit(login, { action: 'switch-account' }, REDIRECT);
    expect(!isUrl(refused) && refused.status).toBe(400);
  });
});

describe('scope text', () => {
  const registry = new ResourceRegistry([{ resource: RESOURCE, name: 'Notes', scopes: { 'notes:read': 'Read your notes' } }]);

  it('describes a scope by its resource, OIDC scopes by the defaults; anything else is unknown', () => {
    const st = createScopeText(registry, { offline_access: 'Keep access' });
    expect(st.describe('notes:read', RESOURCE)).toEqual({ scope: 'notes:read', description: 'Read your notes' });
    expect(st.describe('offline_access')).toEqual({ scope: 'offline_access', description: 'Keep access' });
    expect(st.describe('openid')).toEqual({ scope: 'openid', description: DEFAULT_SCOPE_DESCRIPTIONS.openid });
    expect(st.describe('notes:read', OTHER)).toEqual({ scope: 'notes:read' });
    expect(st.describe('toString')).toEqual({ scope: 'toString' });
    expect(st.resourceName(RESOURCE)).toBe('Notes');
    expect(st.resourceName(OTHER)).toBeUndefined();
  });

  it('every OpenID Connect scope the AS supports has a default description', () => {
    expect(Object.keys(DEFAULT_SCOPE_DESCRIPTIONS).sort()).toEqual([...OIDC_SCOPES].sort());
  });

  it('the page marks a scope without a description as unknown and escapes everything', () => {
    const view: ConsentView = {
      serviceName: 'AS',
      action: '/interaction/x',
      csrf: 'c',
      stylesheet: '/s.css',
      clientName: 'C',
      unverified: false,
      clientId: 'cid',
      redirectHost: 'h',
      redirectUri: 'https://h/cb',
      loopbackOnly: false,
      account: 'a',
      resources: [
        {
          resource: RESOURCE,
          name: 'N',
          scopes: [{ scope: 'x:<b>', description: '<i>Do</i>' }],
          alreadyGranted: [{ scope: 'gone:scope' }],
        },
      ],
      oidcScopes: [],
    };
    const html = consentPage(view);
    expect(html).toContain('<li>&lt;i&gt;Do&lt;/i&gt; <span class="muted">(<code>x:&lt;b&gt;</code>)</span></li>');
    expect(html).toContain('<li><code>gone:scope</code> <span class="muted">(unknown permission: no description)</span></li>');
    expect(html).not.toContain('Use another account');
  });
});

describe('configuration: resources[].name and scopeDescriptions', () => {
  const base = (extra: Partial<AuthorizationServerConfig>): AuthorizationServerConfig => ({
    issuer: 'http://127.0.0.1:9000',
    resources: [{ resource: RESOURCE, scopes: { 'notes:read': 'Read' } }],
    storage: { kind: 'memory' },
    ...extra,
  });
  const problems = (extra: Partial<AuthorizationServerConfig>) => {
    try {
      validateConfig(base(extra));
      return [];
    } catch (err) {
      return (err as { problems: string[] }).problems;
    }
  };

  it('accepts a display name and OIDC scope descriptions', () => {
    expect(problems({ resources: [{ resource: RESOURCE, name: 'Notes', scopes: { 'notes:read': 'Read' } }] })).toEqual([]);
    expect(problems({ scopeDescriptions: { offline_access: 'Keep access' } })).toEqual([]);
  });

  it('refuses an empty or control-character name, descriptions of non-OIDC scopes, and empty descriptions', () => {
    expect(problems({ resources: [{ resource: RESOURCE, name: ' ', scopes: { 'notes:read': 'Read' } }] })[0]).toMatch(
      /^resources\[0\]\.name:/,
    );
    expect(problems({ resources: [{ resource: RESOURCE, name: 'a\nb', scopes: { 'notes:read': 'Read' } }] })[0]).toMatch(
      /^resources\[0\]\.name:/,
    );
    expect(problems({ scopeDescriptions: { 'notes:read': 'Read' } })[0]).toMatch(
      /^scopeDescriptions\.notes:read: only openid, profile, offline_access/,
    );
    expect(problems({ scopeDescriptions: { openid: '' } })[0]).toMatch(/^scopeDescriptions\.openid: must be a non-empty string/);
  });
});
