/**
 * No path lands an identity in someone else's account; disabling ends access; the demo account
 * never reaches production (issue 40 round 3, findings 2 and 5, and the disabled-account gap).
 *
 * OpenID Connect Core §5.7: only `iss` + `sub` identify an upstream user, and a login name or an
 * unverified e-mail another party chose proves nothing. OWASP ASVS 4.0 §2.5.4 / §2.3.1: no shared
 * or published default account. RFC 7009 §2: once revoked, the grant's tokens are invalid.
 *
 * The paths that give an account a name or credentials, each tried against an account that
 * someone made for themselves (an upstream sign-up): configured `users`, the demo seed, the dev
 * auto-login user, `admin user add` / `set-password` (with and without `--adopt`) / `enable`,
 * upstream sign-up naming. ID-JAG just-in-time linking has its own matrix in
 * account-linking.attack.test.ts (the same `account-origin.ts` rule).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { createRedisRevocationList, type RedisRevocationList } from '@mcp-auth-kit/resource-server/redis';
import { runAdmin, startAuthServer, type AdminIo, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import { hashPassword, openStore, silentLogger, type AccountRecord } from '@mcp-auth-kit/authorization-server';
import {
  startUpstreamIdp,
  UPSTREAM_CLIENT_ID,
  UPSTREAM_CLIENT_SECRET,
} from '../../packages/authorization-server/test/helpers/upstream-idp.js';
import { listenProtectedEndpoint, post, type ProtectedEndpoint } from '../faults/helpers/resource-server.js';
import { REDIS_URL, redisPrefix, shouldRunRedisTests } from '../helpers/redis.js';
import { openPgScope, shouldRunPgTests, type PgScope } from '../faults/helpers/postgres.js';
import {
  fullFlow,
  passwordLogin,
  refresh,
  registerClient,
  startAttackStack,
  upstreamSignInToConsent,
  type AttackStack,
} from './helpers/support.js';

const UPSTREAM = 'https://idp.example.test';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'as-seams-'));
  dirs.push(dir);
  return join(dir, 'as.sqlite');
};

function adminIo(password = ''): AdminIo & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (l) => lines.push(String(l)), err: (l) => lines.push(String(l)), readPassword: async () => password };
}
const admin = (file: string, argv: string[], password = '', env: Record<string, string> = {}) => {
  const io = adminIo(password);
  return runAdmin(argv, { DATABASE_URL: `sqlite:${file}`, ...env }, io).then((code) => ({ code, text: io.lines.join('\n') }));
};

/** A store holding `username` as an upstream self sign-up (what the attacker's sign-up leaves). */
async function withSignUp(file: string, username: string): Promise<AccountRecord> {
  const store = await openStore({ kind: 'sqlite', file });
  try {
    return await store.accounts.create({
      id: randomUUID(),
      username,
      passwordHash: null,
      disabled: false,
      upstreamIdentities: [`${UPSTREAM} attacker-1`],
      source: `upstream:${UPSTREAM}`,
    });
  } finally {
    await store.close();
  }
}
async function account(file: string, username: string): Promise<AccountRecord | undefined> {
  const store = await openStore({ kind: 'sqlite', file });
  try {
    return await store.accounts.findByUsername(username);
  } finally {
    await store.close();
  }
}

const start = (file: string, extra: Record<string, unknown> = {}) =>
  startAuthServer({ port: 0, host: '127.0.0.1', storage: { kind: 'sqlite', file }, logger: silentLogger, demoUser: false, ...extra });

/** A password login on the running server: 303 (signed in) or the login page's status. */
const login = (server: RunningAuthServer, username: string, password: string) => passwordLogin(server, username, password, 'seams');

/** Puts the public demo account straight into a running server's store, then signs in with it. */
async function plantedDemoSignIn(server: RunningAuthServer): Promise<number> {
  await server.server.store.accounts.create({
    id: randomUUID(),
    username: 'demo',
    passwordHash: await hashPassword('demo-password'),
    disabled: false,
    source: 'demo',
  });
  return login(server, 'demo', 'demo-password');
}

const TAKEN_BY_UPSTREAM =
  /users \(configuration\): the username "alice" is taken by an account made by a self sign-up through the upstream provider http:\/\/127\.0\.0\.1:\d+.*user set-password alice --adopt/s;
const TAKEN =
  /taken by an account made by a self sign-up through the upstream provider https:\/\/idp\.example\.test.*user set-password \S+ --adopt/s;

describe('attack: an operator path names or re-keys an account someone signed up for themselves', () => {
  const startPaths: [string, string, (file: string) => Promise<RunningAuthServer>][] = [
    [
      'config `users` seeding',
      'alice',
      (f) => start(f, { authorizationServer: { users: [{ username: 'alice', password: 'alice-initial-password' }] } }),
    ],
    ['demo seeding (AS_DEMO_USER)', 'demo', (f) => start(f, { demoUser: true })],
    ['dev auto-login user (DEV_AUTO_LOGIN)', 'dev', (f) => start(f, { devAutoLogin: 'dev' })],
  ];
  it.each(startPaths)(
    '%s: refused at start-up, naming the conflict and the fix; the account is left as it was',
    async (_path, name, run) => {
      const file = freshFile();
      const squatted = await withSignUp(file, name);
      await expect(run(file)).rejects.toThrow(TAKEN);
      expect(await account(file, name)).toEqual(squatted);
    },
  );

  it('admin `user add` of a taken name: refused, nothing changed', async () => {
    const file = freshFile();
    const squatted = await withSignUp(file, 'alice');
    const r = await admin(file, ['user', 'add', 'alice'], 'alice-password-1');
    expect(r.code).toBe(1);
    expect(r.text).toMatch(/already exists/);
    expect(await account(file, 'alice')).toEqual(squatted);
  });

  it('reproduction: admin `user set-password` on an upstream sign-up is refused without --adopt (no password lands on it)', async () => {
    const file = freshFile();
    const squatted = await withSignUp(file, 'alice');
    const r = await admin(file, ['user', 'set-password', 'alice'], 'alice-new-password');
    expect(r.code).toBe(2);
    expect(r.text).toMatch(/made by a self sign-up.*Nothing changed.*user set-password alice --adopt/s);
    expect(await account(file, 'alice')).toEqual(squatted);
  });

  it("`set-password --adopt`: the upstream identity is unlinked, the account becomes the operator's, and `users` seeding then starts", async () => {
    const file = freshFile();
    await withSignUp(file, 'alice');
    const r = await admin(file, ['user', 'set-password', 'alice', '--adopt'], 'alice-new-password');
    expect(r.code, r.text).toBe(0);
    expect(r.text).toContain(`unlinked ${UPSTREAM} attacker-1`);
    const adopted = await account(file, 'alice');
    expect(adopted?.source).toBe('operator');
    expect(adopted?.upstreamIdentities).toEqual([]);
    const store = await openStore({ kind: 'sqlite', file });
    expect(await store.accounts.findByUpstreamIdentity(UPSTREAM, 'attacker-1')).toBeUndefined();
    await store.close();
    const as = await start(file, { authorizationServer: { users: [{ username: 'alice', password: 'alice-initial-password' }] } });
    try {
      expect(await login(as, 'alice', 'alice-new-password')).toBe(303);
    } finally {
      await as.close();
    }
  });

  it('`set-password` on an operator account needs no flag (the ordinary reset)', async () => {
    const file = freshFile();
    const store = await openStore({ kind: 'sqlite', file });
    await store.accounts.create({ id: randomUUID(), username: 'bob', passwordHash: await hashPassword('bob-password-1'), disabled: false });
    await store.close();
    expect((await admin(file, ['user', 'set-password', 'bob'], 'bob-password-2')).code).toBe(0);
  });
});

describe('reproduction through a real upstream sign-up (finding 2, seed-prehijack)', () => {
  it('an attacker signs up upstream as "alice"; `users: [alice]` is refused; after `set-password --adopt` the attacker no longer lands in that account', async () => {
    const file = freshFile();
    const upstream = await startUpstreamIdp();
    const providers = [
      { name: 'Open IdP', issuer: upstream.issuer, clientId: UPSTREAM_CLIENT_ID, clientSecret: UPSTREAM_CLIENT_SECRET, allowSignup: true },
    ];
    const stackWith = async (extra: Record<string, unknown> = {}) => {
      const stack = await startAttackStack({
        devAutoLogin: undefined,
        storage: { kind: 'sqlite', file },
        authorizationServer: { upstream: providers, ...extra },
      });
      await upstream.configure(`${stack.issuer}/interaction/upstream/callback`);
      return stack;
    };
    /** Signs in at the AS through the upstream provider as `login` (its `sub` and preferred_username). */
    const upstreamSignIn = async (stack: AttackStack, login: string) => {
      await upstreamSignInToConsent(stack, await registerClient(stack), login);
      return stack.as.server.store.accounts.findByUpstreamIdentity(upstream.issuer, login);
    };
    try {
      let stack = await stackWith();
      const squatted = await upstreamSignIn(stack, 'alice');
      expect(squatted).toMatchObject({ username: 'alice', source: `upstream:${upstream.issuer}` });
      await stack.close();
      // The operator adds alice: before the fix the start succeeded and kept the attacker's account.
      await expect(stackWith({ users: [{ username: 'alice', password: 'alice-initial-password' }] })).rejects.toThrow(TAKEN_BY_UPSTREAM);
      expect((await admin(file, ['user', 'set-password', 'alice'], 'alice-new-password')).code).toBe(2);
      const adopted = await admin(file, ['user', 'set-password', 'alice', '--adopt'], 'alice-new-password');
      expect(adopted.code, adopted.text).toBe(0);
      stack = await stackWith({ users: [{ username: 'alice', password: 'alice-initial-password' }] });
      try {
        const again = await upstreamSignIn(stack, 'alice');
        expect(again?.id).not.toBe(squatted!.id);
        expect(again?.username).not.toBe('alice');
        expect((await stack.as.server.store.accounts.findById(squatted!.id))?.upstreamIdentities).toEqual([]);
      } finally {
        await stack.close();
      }
    } finally {
      await upstream.close();
    }
  });
});

describe('attack: the demo account reaches a production server through a shared store (finding 5)', () => {
  it('production first: a development instance refuses to seed the demo account into the store production marked', async () => {
    const file = freshFile();
    const prod = await start(file, { production: true });
    try {
      await expect(start(file, { demoUser: true })).rejects.toThrow(
        /demo account "demo" \(public password\) is not seeded: this store is used by the production server/,
      );
      expect(await prod.server.store.accounts.findByUsername('demo')).toBeUndefined();
    } finally {
      await prod.close();
    }
  });

  it('reproduction: a demo account that reaches the store after production started cannot sign in there (checked at each login)', async () => {
    const file = freshFile();
    const prod = await start(file, { production: true });
    try {
      // What a development build without the marker check leaves in the shared store.
      expect(await plantedDemoSignIn(prod)).toBe(403);
    } finally {
      await prod.close();
    }
  });

  it('development first: the demo account is marked `demo`, and production refuses to start on that store', async () => {
    const file = freshFile();
    const dev = await start(file, { demoUser: true });
    expect((await dev.server.store.accounts.findByUsername('demo'))?.source).toBe('demo');
    await dev.close();
    await expect(start(file, { production: true })).rejects.toThrow(/still signs in with the public demo password/);
  });
});

describe.runIf(await shouldRunPgTests())('attack: the demo account through a shared PostgreSQL store (shared-store-demo)', () => {
  let pg: PgScope;
  beforeAll(async () => {
    pg = await openPgScope('account_seams');
  });
  afterAll(async () => {
    await pg?.drop();
  });

  it('a development instance on the production schema refuses to seed the demo account; one that got there anyway cannot sign in', async () => {
    const storage = { kind: 'postgres', url: pg.url, schema: pg.schema } as const;
    const prod = await startAuthServer({ port: 0, host: '127.0.0.1', storage, production: true, logger: silentLogger });
    try {
      await expect(startAuthServer({ port: 0, host: '127.0.0.1', storage, demoUser: true, logger: silentLogger })).rejects.toThrow(
        /is not seeded: this store is used by the production server/,
      );
      expect(await prod.server.store.accounts.findByUsername('demo')).toBeUndefined();
      expect(await plantedDemoSignIn(prod)).toBe(403);
    } finally {
      await prod.close();
    }
  });
});

describe.runIf(await shouldRunRedisTests())('attack: a disabled account keeps its access (RFC 7009 §2)', () => {
  const redis = redisPrefix('account-seams');
  const client = createClient({ url: REDIS_URL });
  client.on('error', () => {});
  let subscriber: typeof client;
  let list: RedisRevocationList;
  let endpoint: ProtectedEndpoint;
  let stack: AttackStack;
  let clientId: string;
  const file = freshFile();

  beforeAll(async () => {
    await client.connect();
    subscriber = client.duplicate();
    subscriber.on('error', () => {});
    await subscriber.connect();
    endpoint = await listenProtectedEndpoint();
    stack = await startAttackStack({
      storage: { kind: 'sqlite', file },
      extraResources: [endpoint.resource],
      redisUrl: REDIS_URL,
      redisPrefix: redis.prefix,
    });
    list = await createRedisRevocationList({ client, subscriber, prefix: redis.prefix, resyncIntervalMs: 100 });
    endpoint.protect(stack.issuer, { revocation: list });
    clientId = await registerClient(stack);
  });
  afterAll(async () => {
    await list?.close();
    subscriber?.destroy();
    await endpoint?.close();
    await stack?.close();
    await redis.drop();
    client.destroy();
  });

  it('reproduction: `user disable` revokes the grants (the resource server refuses the access token), and `user enable` revives no refresh token', async () => {
    const tokens = await fullFlow(stack, clientId, { resource: endpoint.resource });
    expect((await post(endpoint.resource, tokens.access_token)).status).toBe(200);
    const env = { REDIS_URL, REDIS_PREFIX: redis.prefix };
    const off = await admin(file, ['user', 'disable', 'demo'], '', env);
    expect(off.code, off.text).toBe(0);
    expect(off.text).toMatch(/revoked 1 grant/);
    const deadline = Date.now() + 3000;
    while ((await post(endpoint.resource, tokens.access_token)).status !== 401 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect((await post(endpoint.resource, tokens.access_token)).status).toBe(401);
    expect((await admin(file, ['user', 'enable', 'demo'], '', env)).code).toBe(0);
    const again = await refresh(stack, clientId, tokens.refresh_token!);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });
});

/**
 * The class, not the instance: every source line that creates an account or changes its name,
 * credentials, identities or state, and the rule (and test) that covers it. A new such line fails
 * here until it is given a row (and goes through `account-origin.ts`).
 */
describe('inventory: every path that writes an account', () => {
  const ROOT = join(import.meta.dirname, '..', '..');
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      if (name === 'node_modules' || name === 'dist' || name === 'test') return [];
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return files(path);
      return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
    });
  const KNOWN: Record<string, string> = {
    'packages/authorization-server/src/accounts/accounts.ts accounts.create(':
      'users / demo seeding, dev auto-login: seedConflict (operator or same source only), production mark (this file)',
    'packages/authorization-server/src/upstream/login.ts accounts.create(':
      'upstream sign-up: a fresh name only, e-mail-like only when verified (upstreamNameCandidates: packages/authorization-server/test/account-names.test.ts; account-linking.attack.test.ts)',
    'packages/authorization-server/src/grants/jwt-bearer/accounts.ts accounts.create(':
      'ID-JAG just in time (account-linking.attack.test.ts)',
    'packages/authorization-server/src/grants/jwt-bearer/accounts.ts accounts.update(':
      'ID-JAG linking: mayAdopt (account-linking.attack.test.ts)',
    'packages/testing/src/test-accounts.ts accounts.create(': 'testing kit: operator accounts in a test store',
    'packages/authorization-server/src/admin/users.ts accounts.create(':
      'admin service user create (console, JSON API, admin tool): any existing name refused (admin-service.test.ts)',
    'packages/authorization-server/src/admin/users.ts accounts.update(':
      'admin service disable (revokes grants, ends sessions), link/unlink identities (admin-service.test.ts); enable (revives no refresh token) and admin role, operator only, audited (admin-api.test.ts, console.attack.test.ts)',
    'packages/authorization-server/src/server.ts accounts.update(':
      "console.firstAdmin: the admin role for an operator-made account only, never a self-signed-up one (this file's first-admin test)",
    'apps/auth-server/src/admin-users.ts accounts.update(':
      'admin set-password (--adopt for a non-operator account); user add, disable, enable and link/unlink go through the admin service (this file)',
  };
  it('each writing site has a row', () => {
    const found = new Set<string>();
    for (const dir of ['packages', 'apps']) {
      for (const path of files(join(ROOT, dir))) {
        const text = readFileSync(path, 'utf8');
        for (const call of ['accounts.create(', 'accounts.update(']) if (text.includes(call)) found.add(`${relative(ROOT, path)} ${call}`);
      }
    }
    expect([...found].sort()).toEqual(Object.keys(KNOWN).sort());
  });
});
