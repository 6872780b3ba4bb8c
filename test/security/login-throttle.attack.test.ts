import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from 'tough-cookie';
import { startAuthServer, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import type { Logger } from '@mcp-auth-kit/authorization-server';
import {
  authorizationUrl,
  frontChannel,
  loginPageUrl,
  pkcePair,
  postJson,
  registerClient,
  startAttackStack,
  NATIVE_REDIRECT,
  type AttackStack,
} from './helpers/support.js';
import { openPgScope, type PgScope } from '../faults/helpers/postgres.js';

/**
 * Online password guessing against the login page, in parallel (OWASP ASVS 4.0 §2.2.1:
 * anti-automation "rate limiting … effective against … brute force"; RFC 6819 §4.4.3.6 /
 * §5.1.4.2.3 on password guessing; MCP security best practices rely on the AS login).
 *
 * Every limiter must count the attempt first — one atomic increment in the shared store — and
 * decide on the count it returned. A limiter that reads the counter, checks the password and
 * only then adds the failure lets every guess that arrives before the first failure is written
 * through: 16 parallel wrong passwords for one (address, user) were all checked against the hash
 * with a limit of 10. The tests fire N requests at once and assert that exactly the limit
 * reached the password check (HTTP 401 + `login.failed`) and the rest were throttled (429 +
 * `login.throttled`), for each brake, and across two AS instances on one PostgreSQL schema.
 */

const N = 16;

function recordingLogger() {
  const lines: Array<{ message: string; fields: Record<string, unknown> }> = [];
  const push = (message: string, fields: Record<string, unknown> = {}) => lines.push({ message, fields });
  const logger: Logger = { debug: () => {}, info: push, warn: push, error: push };
  return {
    logger,
    audits: (event: string, match: Record<string, unknown> = {}) =>
      lines.filter((l) => l.fields.audit === event && Object.entries(match).every(([k, v]) => l.fields[k] === v)),
  };
}

interface LoginForm {
  /** Path of the interaction's form (the same on every instance sharing the store). */
  path: string;
  csrf: string;
  cookie: string;
}

/** A live interaction's login form, with its CSRF token and the browser's cookies. */
async function openLoginForm(issuer: string, authorize: URL): Promise<LoginForm> {
  const jar = new CookieJar();
  const page = await frontChannel(issuer, authorize, jar);
  if (page.kind !== 'stopped' || page.status !== 200) throw new Error(`expected the login page, got ${page.kind}`);
  const action = /<form method="post" action="([^"]+)"/.exec(page.body)![1]!.replace(/&amp;/g, '&');
  const url = new URL(action, issuer);
  return {
    path: url.pathname + url.search,
    csrf: /name="csrf" value="([^"]+)"/.exec(page.body)![1]!,
    cookie: await jar.getCookieString(url.href),
  };
}

/** One login post from `address` (X-Forwarded-For, trusted by the AS); returns the status. */
async function guess(base: string, form: LoginForm, username: string, password: string, address: string) {
  const res = await fetch(`${base}${form.path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie, 'x-forwarded-for': address },
    body: new URLSearchParams({ csrf: form.csrf, action: 'login', username, password }).toString(),
  });
  const body = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
}

function tally(results: Array<{ status: number }>) {
  const counts = new Map<number, number>();
  for (const r of results) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return Object.fromEntries(counts);
}

describe('attack: parallel password guessing, one AS instance (count first, then check)', () => {
  const defaults = recordingLogger();
  const tight = recordingLogger();
  let stack: AttackStack;
  let small: AttackStack;
  const users = [{ username: 'victim', password: 'victim-password-1' }];

  beforeAll(async () => {
    // The shipped defaults (10 per address+user, 50 per user, 100 per address)…
    stack = await startAttackStack({
      devAutoLogin: undefined,
      quiet: false,
      logger: defaults.logger,
      authorizationServer: { trustProxy: true, users },
    });
    // …and small per-user / per-address limits, so N parallel guesses cross each of them.
    small = await startAttackStack({
      devAutoLogin: undefined,
      quiet: false,
      logger: tight.logger,
      authorizationServer: { trustProxy: true, users, loginThrottle: { perAddressAndUser: 100, perUser: 5, perAddress: 7 } },
    });
  });
  afterAll(async () => Promise.all([stack?.close(), small?.close()]));

  const openForm = async (s: AttackStack) =>
    openLoginForm(s.issuer, authorizationUrl(s, { clientId: await registerClient(s), challenge: pkcePair().challenge }));

  it(`per (address, user): of ${N} parallel wrong passwords exactly 10 are checked, the rest answered 429`, async () => {
    const form = await openForm(stack);
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => guess(stack.issuer, form, 'victim', `wrong-${i}`, '203.0.113.10')),
    );
    expect(tally(results)).toEqual({ 401: 10, 429: N - 10 });
    expect(defaults.audits('login.failed', { username: 'victim', ip: '203.0.113.10' })).toHaveLength(10);
    expect(defaults.audits('login.throttled', { username: 'victim', limit: 'address-and-user' })).toHaveLength(N - 10);
    const throttled = results.find((r) => r.status === 429)!;
    expect(throttled.retryAfter).toBe(String(15 * 60));
    expect(throttled.body).toContain('Too many failed attempts');
    // The lock holds: the right password from that pair is not even checked.
    expect((await guess(stack.issuer, form, 'victim', 'victim-password-1', '203.0.113.10')).status).toBe(429);
    // Another address is not locked out by this pair (the per-user limit is 50).
    expect((await guess(stack.issuer, await openForm(stack), 'victim', 'victim-password-1', '198.51.100.10')).status).toBe(303);
  });

  it(`per user from many addresses: of ${N} parallel guesses from ${N} addresses exactly 5 are checked`, async () => {
    const form = await openForm(small);
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => guess(small.issuer, form, 'victim', `wrong-${i}`, `203.0.113.${100 + i}`)),
    );
    expect(tally(results)).toEqual({ 401: 5, 429: N - 5 });
    expect(tight.audits('login.failed', { username: 'victim' })).toHaveLength(5);
    expect(tight.audits('login.throttled', { username: 'victim', limit: 'user' })).toHaveLength(N - 5);
  });

  it(`per address over many users (spraying): of ${N} parallel guesses for ${N} usernames exactly 7 are checked`, async () => {
    const form = await openForm(small);
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => guess(small.issuer, form, `sprayed-${i}`, 'Summer2026!', '198.51.100.77')),
    );
    expect(tally(results)).toEqual({ 401: 7, 429: N - 7 });
    expect(tight.audits('login.failed', { ip: '198.51.100.77' })).toHaveLength(7);
    expect(tight.audits('login.throttled', { ip: '198.51.100.77', limit: 'address' })).toHaveLength(N - 7);
  });

  it('DCR rate limit (RFC 7591 §3 endpoint, per address): of 16 parallel registrations exactly the limit get a client', async () => {
    const limited = await startAttackStack({ authorizationServer: { registration: { rateLimit: { max: 6, windowSeconds: 3600 } } } });
    try {
      const results = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          postJson(limited.metadata.registration_endpoint, {
            client_name: `burst ${i}`,
            redirect_uris: [NATIVE_REDIRECT],
            token_endpoint_auth_method: 'none',
          }),
        ),
      );
      expect(tally(results)).toEqual({ 201: 6, 429: N - 6 });
    } finally {
      await limited.close();
    }
  });
});

describe('attack: parallel password guessing spread over two AS instances on one PostgreSQL schema', () => {
  const log = recordingLogger();
  let pg: PgScope;
  let a: RunningAuthServer;
  let b: RunningAuthServer;

  beforeAll(async () => {
    pg = await openPgScope('login_throttle');
    const options = {
      port: 0,
      host: '127.0.0.1',
      storage: { kind: 'postgres', url: pg.url, schema: pg.schema } as const,
      logger: log.logger,
      authorizationServer: {
        trustProxy: true,
        users: [{ username: 'victim', password: 'victim-password-1' }],
        loginThrottle: { perAddressAndUser: 100, perUser: 5, perAddress: 100 },
      },
    };
    a = await startAuthServer(options);
    // The second instance behind the same (imaginary) load balancer: same issuer, same schema.
    b = await startAuthServer({ ...options, issuer: a.issuer });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await pg?.drop();
  });

  it(`per user: of ${N} parallel guesses from ${N} addresses, alternating between the instances, exactly 5 are checked`, async () => {
    const reg = await postJson(`${a.url}/reg`, {
      client_name: 'two instances',
      redirect_uris: [NATIVE_REDIRECT],
      token_endpoint_auth_method: 'none',
    });
    expect(reg.status).toBe(201);
    const authorize = loginPageUrl(a.issuer, reg.body.client_id as string);
    const form = await openLoginForm(a.issuer, authorize);
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => guess(i % 2 ? b.url : a.url, form, 'victim', `wrong-${i}`, `203.0.113.${150 + i}`)),
    );
    expect(tally(results)).toEqual({ 401: 5, 429: N - 5 });
    expect(log.audits('login.failed', { username: 'victim' })).toHaveLength(5);
    expect(log.audits('login.throttled', { username: 'victim', limit: 'user' })).toHaveLength(N - 5);
    // Both instances refused: the counter is the store's, not a process's.
    expect(new Set(results.map((r, i) => (r.status === 429 ? i % 2 : undefined)).filter((x) => x !== undefined)).size).toBe(2);
  });
});

describe('attack: lookalike usernames against the lock (issue 40 item 3; UTS #15 NFKC, one canonical identity)', () => {
  // The account lookup folds NFKC + case, so `𝖇𝖔𝖇`, `ＢＯＢ` and `Bob` all sign in as bob: the
  // throttle must count them as bob too, or each spelling brings a fresh set of guesses.
  const SPELLINGS = ['bob', '𝖇𝖔𝖇', 'ＢＯＢ', 'Bob', '𝐛𝐨𝐛', 'ｂｏｂ'];
  const users = [{ username: 'bob', password: 'bob-password-1' }];
  let pair: AttackStack;
  let perUser: AttackStack;

  beforeAll(async () => {
    [pair, perUser] = await Promise.all([
      startAttackStack({
        devAutoLogin: undefined,
        authorizationServer: { trustProxy: true, users, loginThrottle: { perAddressAndUser: 3 } },
      }),
      startAttackStack({
        devAutoLogin: undefined,
        authorizationServer: { trustProxy: true, users, loginThrottle: { perAddressAndUser: 100, perUser: 4, perAddress: 100 } },
      }),
    ]);
  });
  afterAll(async () => Promise.all([pair?.close(), perUser?.close()]));

  const openForm = async (s: AttackStack) =>
    openLoginForm(s.issuer, authorizationUrl(s, { clientId: await registerClient(s), challenge: pkcePair().challenge }));

  it('every lookalike spelling signs in as bob (the lookup folds them): the right password with 𝖇𝖔𝖇 → 303', async () => {
    expect((await guess(pair.issuer, await openForm(pair), '𝖇𝖔𝖇', 'bob-password-1', '192.0.2.1')).status).toBe(303);
  });

  it('bob locked from one address (429): no lookalike spelling with the right password gets in from there', async () => {
    const form = await openForm(pair);
    for (let i = 0; i < 3; i++) expect((await guess(pair.issuer, form, 'bob', `wrong-${i}`, '192.0.2.2')).status).toBe(401);
    expect((await guess(pair.issuer, form, 'bob', 'bob-password-1', '192.0.2.2')).status).toBe(429);
    for (const spelling of SPELLINGS) {
      expect((await guess(pair.issuer, await openForm(pair), spelling, 'bob-password-1', '192.0.2.2')).status, spelling).toBe(429);
    }
  });

  it('lookalike wrong guesses from one address count toward one lock: 3 checked, then 429 for every spelling', async () => {
    const form = await openForm(pair);
    const statuses = [];
    for (const [i, spelling] of SPELLINGS.entries())
      statuses.push((await guess(pair.issuer, form, spelling, `wrong-${i}`, '192.0.2.3')).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    expect((await guess(pair.issuer, form, 'bob', 'bob-password-1', '192.0.2.3')).status).toBe(429);
  });

  it(`per user, from many addresses: of ${N} parallel lookalike guesses exactly 4 are checked`, async () => {
    const form = await openForm(perUser);
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        guess(perUser.issuer, form, SPELLINGS[i % SPELLINGS.length]!, `wrong-${i}`, `192.0.2.${100 + i}`),
      ),
    );
    expect(tally(results)).toEqual({ 401: 4, 429: N - 4 });
  });
});
