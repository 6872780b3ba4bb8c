import { describe, expect, it } from 'vitest';
import { REDIRECT, registerClient, RESOURCE, startAs, type RunningAs } from './helpers/as.js';
import { codeAuthorizeUrl, postFormAsIs } from './helpers/flow.js';
import { recordingLogger } from './helpers/recording-logger.js';
import { hashPassword, verifyPassword } from '../src/accounts/passwords.js';
import { LoginThrottle } from '../src/interactions/throttle.js';
import { validateConfig } from '../src/config.js';
import type { Store } from '../src/storage/types.js';
import { type BrowserPage, HeadlessBrowser, isUrl, pkcePair } from '@mcp-auth-kit/test-utils';
import { memoryStoreForDescribe, startAsForDescribe } from './helpers/for-describe.js';

async function openLogin(base: string, clientId: string, ua = new HeadlessBrowser(), headers: Record<string, string> = {}) {
  const { challenge } = pkcePair();
  const page = await ua.follow(codeAuthorizeUrl(base, challenge, { client_id: clientId, state: 's' }), REDIRECT, { headers });
  if (isUrl(page)) throw new Error('expected the login page');
  return { ua, page };
}

describe('passwords (scrypt)', () => {
  it('hashes with a random salt and the parameters inside; verifies only the right password', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('refuses malformed or missing hashes instead of throwing', async () => {
    expect(await verifyPassword('x', null)).toBe(false);
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$0$8$1$AAAA$BBBB')).toBe(false);
    expect(await verifyPassword('x', 'bcrypt$1$2$3$4$5')).toBe(false);
  });

  it('compares Unicode passwords after NFKC normalisation', async () => {
    const hash = await hashPassword('ﬁle-pass-word'); // U+FB01 ligature
    expect(await verifyPassword('file-pass-word', hash)).toBe(true);
  });
});

describe('login throttle (shared kv)', () => {
  let store: Store;
  memoryStoreForDescribe((opened) => (store = opened));

  it('per address+user, per user (from any address) and per address (spraying), each within its window', async () => {
    const limits = { perAddressAndUser: 3, perUser: 5, perAddress: 7, windowSeconds: 60 };
    const a = new LoginThrottle(store.kv, limits);
    const b = new LoginThrottle(store.kv, limits); // a second instance on the same store
    for (let i = 0; i < 3; i++) expect(await a.attempt('10.0.0.1', 'Bob')).toBeUndefined();
    expect(await b.attempt('10.0.0.1', 'bob')).toBe('address-and-user');
    for (let i = 0; i < 2; i++) expect(await b.attempt(`10.0.0.${10 + i}`, 'bob')).toBeUndefined();
    expect(await a.attempt('10.9.9.9', 'BOB')).toBe('user');
    for (let i = 0; i < 7; i++) expect(await a.attempt('10.0.0.99', `user${i}`)).toBeUndefined();
    expect(await a.attempt('10.0.0.99', 'somebody-else')).toBe('address');
  });

  it('counts first: of 12 parallel attempts on one pair exactly the limit get through', async () => {
    const t = new LoginThrottle(store.kv, { perAddressAndUser: 4, perUser: 100, perAddress: 100, windowSeconds: 60 });
    const results = await Promise.all(Array.from({ length: 12 }, () => t.attempt('10.3.0.1', 'erin')));
    expect(results.filter((r) => r === undefined)).toHaveLength(4);
    expect(results.filter((r) => r === 'address-and-user')).toHaveLength(8);
  });

  it('a refused attempt weighs only on the brake that refused it', async () => {
    const t = new LoginThrottle(store.kv, { perAddressAndUser: 2, perUser: 3, perAddress: 100, windowSeconds: 60 });
    for (let i = 0; i < 2; i++) expect(await t.attempt('10.4.0.1', 'frank')).toBeUndefined();
    // Hammering the locked pair: neither the user's nor the address's budget shrinks.
    for (let i = 0; i < 20; i++) expect(await t.attempt('10.4.0.1', 'frank')).toBe('address-and-user');
    expect(await t.attempt('10.4.0.2', 'frank')).toBeUndefined();
    expect(await t.attempt('10.4.0.3', 'frank')).toBe('user');
    // Hammering the locked user from another address: that address's budget is intact.
    const u = new LoginThrottle(store.kv, { perAddressAndUser: 100, perUser: 3, perAddress: 5, windowSeconds: 60 });
    for (let i = 0; i < 3; i++) expect(await u.attempt('10.5.0.1', 'grace')).toBeUndefined();
    for (let i = 0; i < 20; i++) expect(await u.attempt('10.5.0.2', 'grace')).toBe('user');
    for (let i = 0; i < 5; i++) expect(await u.attempt('10.5.0.2', `other${i}`)).toBeUndefined();
    expect(await u.attempt('10.5.0.2', 'other5')).toBe('address');
  });

  it('a success clears the address+user counter and gives its attempt back to the user and address counters', async () => {
    const t = new LoginThrottle(store.kv, { perAddressAndUser: 2, perUser: 2, perAddress: 100, windowSeconds: 60 });
    expect(await t.attempt('10.1.0.1', 'carol')).toBeUndefined();
    await t.succeeded('10.1.0.1', 'carol');
    expect(await t.attempt('10.1.0.1', 'carol')).toBeUndefined();
    expect(await t.attempt('10.1.0.1', 'carol')).toBeUndefined();
    expect(await t.attempt('10.1.0.1', 'carol')).toBe('address-and-user');
    expect(await t.attempt('10.1.0.9', 'carol'), 'two failures counted for the user, the success not').toBe('user');
  });
});

describe('interaction pages: headers, CSRF, lockout, audit', () => {
  let t: RunningAs;
  let clientId: string;
  const log = recordingLogger();
  startAsForDescribe(
    {
      logger: log.logger,
      trustProxy: true,
      users: [
        { username: 'alice', password: 'alice-password' },
        { username: 'bob', password: 'bob-password' },
      ],
    },
    async (started) => {
      t = started;
      clientId = (await registerClient(t.url)).body.client_id;
    },
  );

  function expectStrictPage(page: BrowserPage) {
    expect(page.headers.get('cache-control')).toBe('no-store');
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "style-src 'self'", "script-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"])
      expect(csp).toContain(directive);
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    // No inline style or script for the CSP to allow.
    expect(page.body).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
    expect(page.body).toContain('<html lang="en">');
    expect(page.body).toContain('name="viewport"');
    expect(page.body).toContain('<link rel="stylesheet" href="/interaction/assets/style.css">');
  }

  it('login, consent and error pages: no-store, strict CSP (style-src self, no inline), accessible labels', async () => {
    const { ua, page } = await openLogin(t.url, clientId);
    expectStrictPage(page);
    expect(page.body).toContain('<label for="username">');
    expect(page.body).toContain('<label for="password">');
    expect(page.body).toMatch(/<h1>/);
    const consent = await ua.submit(page, { username: 'alice', password: 'alice-password', action: 'login' }, REDIRECT);
    if (isUrl(consent)) throw new Error('expected consent');
    expectStrictPage(consent);
    const error = await ua.request(`${t.url}/interaction/nope`);
    expect(error.status).toBe(400);
    expectStrictPage(error);
  });

  it("oidc-provider's own error page (unknown client) uses the same stylesheet under style-src 'self'", async () => {
    const res = await fetch(`${t.url}/auth?client_id=nobody&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT)}`);
    const body = await res.text();
    expect(res.status).toBe(400);
    expect(res.headers.get('content-security-policy')).toContain("style-src 'self'");
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(body).toContain('<link rel="stylesheet" href="/interaction/assets/style.css">');
    expect(body).not.toMatch(/<style|<script/);
  });

  it('the stylesheet is served as text/css by the AS', async () => {
    const res = await fetch(`${t.url}/interaction/assets/style.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await res.text()).toContain('@media (max-width:30rem)');
  });

  it('a wrong password re-renders the form with the error linked to the fields (aria-describedby)', async () => {
    const { ua, page } = await openLogin(t.url, clientId);
    const next = await ua.submit(page, { username: 'alice', password: 'nope-nope', action: 'login' }, REDIRECT);
    if (isUrl(next)) throw new Error('unexpected redirect');
    expect(next.body).toContain('<p id="login-error" class="error" role="alert">Invalid username or password.</p>');
    expect(next.body).toMatch(/id="password"[^>]*aria-invalid="true" aria-describedby="login-error"/);
    expect(log.audits('login.failed').at(-1)?.fields).toMatchObject({ method: 'password', username: 'alice', reason: 'wrong-password' });
    expect(JSON.stringify(log.lines)).not.toContain('nope-nope');
  });

  it('CSRF: a consent approval without the form token (cookie only) is refused with 403 and issues no code', async () => {
    const { ua, page } = await openLogin(t.url, clientId);
    const consent = await ua.submit(page, { username: 'alice', password: 'alice-password', action: 'login' }, REDIRECT);
    if (isUrl(consent)) throw new Error('expected consent');
    const res = await postFormAsIs(ua, consent, { action: 'approve' });
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
  });

  it('CSRF: the form token from another browser is refused', async () => {
    const victim = await openLogin(t.url, clientId);
    const attacker = await openLogin(t.url, clientId);
    const attackerToken = /name="csrf" value="([^"]+)"/.exec(attacker.page.body)![1]!;
    const res = await postFormAsIs(victim.ua, victim.page, {
      username: 'alice',
      password: 'alice-password',
      action: 'login',
      csrf: attackerToken,
    });
    expect(res.status).toBe(403);
  });

  it('brute force across instances and addresses: 10 failures for one user from one address lock that pair (429) on every instance sharing the store', async () => {
    const other = await startAs({ storage: t.as.store, logger: log.logger, trustProxy: true, users: [] });
    try {
      const from = { 'x-forwarded-for': '203.0.113.7' };
      let { ua, page } = await openLogin(t.url, clientId, new HeadlessBrowser(), from);
      for (let i = 0; i < 10; i++) {
        const next = await ua.follow(new URL(/action="([^"]+)"/.exec(page.body)![1]!, page.url).href, REDIRECT, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...from },
          body: new URLSearchParams({
            csrf: /name="csrf" value="([^"]+)"/.exec(page.body)![1]!,
            username: 'bob',
            password: `wrong-${i}`,
            action: 'login',
          }),
        });
        if (isUrl(next)) throw new Error('unexpected redirect');
        expect(next.status).toBe(401);
        page = next;
      }
      // The same pair on the other instance: throttled even with the right password.
      const second = await openLogin(other.url, clientId, new HeadlessBrowser(), from);
      const blocked = await second.ua.follow(new URL(/action="([^"]+)"/.exec(second.page.body)![1]!, second.page.url).href, REDIRECT, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...from },
        body: new URLSearchParams({
          csrf: /name="csrf" value="([^"]+)"/.exec(second.page.body)![1]!,
          username: 'bob',
          password: 'bob-password',
          action: 'login',
        }),
      });
      expect(!isUrl(blocked) && blocked.status).toBe(429);
      expect(log.audits('login.throttled').at(-1)?.fields).toMatchObject({ username: 'bob', limit: 'address-and-user' });
      // Another address is not locked out by this pair.
      const elsewhere = await openLogin(t.url, clientId, new HeadlessBrowser(), { 'x-forwarded-for': '198.51.100.1' });
      const ok = await elsewhere.ua.submit(elsewhere.page, { username: 'bob', password: 'bob-password', action: 'login' }, REDIRECT);
      expect(isUrl(ok) || ok.status === 200).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('audit: one event per decision — login.succeeded, consent.granted, consent.denied — without secrets', async () => {
    const before = log.lines.length;
    const { ua, page } = await openLogin(t.url, clientId);
    const consent = await ua.submit(page, { username: 'alice', password: 'alice-password', action: 'login' }, REDIRECT);
    if (isUrl(consent)) throw new Error('expected consent');
    await ua.submit(consent, { action: 'deny' }, REDIRECT);
    const fresh = (await registerClient(t.url)).body.client_id;
    const second = await openLogin(t.url, fresh);
    const consent2 = await second.ua.submit(second.page, { username: 'alice', password: 'alice-password', action: 'login' }, REDIRECT);
    if (isUrl(consent2)) throw new Error('expected consent');
    await second.ua.submit(consent2, { action: 'approve' }, REDIRECT);
    const events = log.lines
      .slice(before)
      .map((l) => String(l.fields.audit ?? ''))
      .filter((e) => /^(login|consent)\./.test(e));
    expect(events).toEqual(['login.succeeded', 'consent.denied', 'login.succeeded', 'consent.granted']);
    const granted = log.lines.slice(before).find((l) => l.fields.audit === 'consent.granted')!;
    expect(granted.fields).toMatchObject({ client_id: fresh, resources: [RESOURCE], scopes: ['notes:read'], via: 'page' });
    expect(JSON.stringify(log.lines.slice(before))).not.toContain('alice-password');
  });
});

describe('loginThrottle configuration', () => {
  it('per-user lockout from many addresses (distributed guessing), with configured limits', async () => {
    const t = await startAs({ trustProxy: true, loginThrottle: { perUser: 3, perAddressAndUser: 100 } });
    try {
      const clientId = (await registerClient(t.url)).body.client_id;
      const attempt = async (address: string, password: string) => {
        const headers = { 'x-forwarded-for': address };
        const { ua, page } = await openLogin(t.url, clientId, new HeadlessBrowser(), headers);
        return ua.follow(new URL(/action="([^"]+)"/.exec(page.body)![1]!, page.url).href, REDIRECT, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
          body: new URLSearchParams({
            csrf: /name="csrf" value="([^"]+)"/.exec(page.body)![1]!,
            username: 'alice',
            password,
            action: 'login',
          }),
        });
      };
      for (let i = 0; i < 3; i++) expect(((await attempt(`192.0.2.${i + 1}`, 'wrong-password')) as BrowserPage).status).toBe(401);
      const locked = await attempt('192.0.2.200', 'alice-password');
      expect(!isUrl(locked) && locked.status).toBe(429);
      expect(!isUrl(locked) && locked.headers.get('retry-after')).toBe('900');
    } finally {
      await t.close();
    }
  });

  it('invalid limits are configuration errors', () => {
    expect(() =>
      validateConfig({
        issuer: 'http://127.0.0.1:1',
        resources: [{ resource: RESOURCE, scopes: { a: 'A' } }],
        storage: { kind: 'memory' },
        loginThrottle: { perUser: 0, bogus: 1 } as never,
      }),
    ).toThrow(/loginThrottle.perUser: must be a positive integer[\s\S]*loginThrottle.bogus: unknown field/);
  });
});

describe('issuer with a path', () => {
  it('pages, stylesheet and /account live under the issuer path', async () => {
    const t = await startAs({ issuerPath: '/tenant1' });
    try {
      const clientId = (await registerClient(`${t.url}/tenant1`)).body.client_id;
      const { page } = await openLogin(`${t.url}/tenant1`, clientId);
      expect(page.url).toContain('/tenant1/interaction/');
      expect(page.body).toContain('<link rel="stylesheet" href="/tenant1/interaction/assets/style.css">');
      expect((await fetch(`${t.url}/tenant1/interaction/assets/style.css`)).status).toBe(200);
      expect((await fetch(`${t.url}/tenant1/account`)).status).toBe(401);
    } finally {
      await t.close();
    }
  });
});

describe('DEV_AUTO_LOGIN', () => {
  const base = {
    resources: [{ resource: RESOURCE, scopes: { 'notes:read': 'Read' } }],
    storage: { kind: 'memory' as const },
    devAutoLogin: 'dev',
  };
  it('is refused unless the issuer host is loopback', () => {
    expect(() => validateConfig({ ...base, issuer: 'https://auth.example.com' })).toThrow(
      /devAutoLogin: refused because the issuer host "auth.example.com" is not loopback/,
    );
    expect(() => validateConfig({ ...base, issuer: 'https://127.0.0.1.nip.io' })).toThrow(/devAutoLogin: refused/);
    expect(() => validateConfig({ ...base, issuer: 'http://localhost:9000' })).not.toThrow();
    expect(() => validateConfig({ ...base, issuer: 'http://127.0.0.1:9000' })).not.toThrow();
    expect(() => validateConfig({ ...base, issuer: 'http://[::1]:9000' })).not.toThrow();
  });

  it('on a loopback issuer, approves without pages (and never renders the login form)', async () => {
    const t = await startAs({ devAutoLogin: 'dev-user' });
    try {
      const clientId = (await registerClient(t.url)).body.client_id;
      const { challenge } = pkcePair();
      const end = await new HeadlessBrowser().follow(codeAuthorizeUrl(t.url, challenge, { client_id: clientId, state: 's' }), REDIRECT);
      expect(isUrl(end) && end.searchParams.get('code')).toBeTruthy();
    } finally {
      await t.close();
    }
  });
});
