import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { startAuthServer, type RunningAuthServer } from '../src/index.js';
import { runAdmin, type AdminIo } from '../src/admin.js';
import { HeadlessBrowser, isUrl, pkcePair, TEST_REDIS_URL } from '@mcp-auth-kit/test-utils';

const RESOURCE = 'http://127.0.0.1:3999/mcp';
// A web client: its remembered approval skips the consent page (loopback clients are always asked).
const REDIRECT = 'https://app.example/cb';

const REDIS_URL = TEST_REDIS_URL;
/** The machine's Redis, when it answers (under CI it must): the revocation signal is checked then. */
async function redisClient() {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2000, reconnectStrategy: false } });
  client.on('error', () => {});
  try {
    await client.connect();
    return client;
  } catch (error) {
    if (process.env.CI) throw error;
    return undefined;
  }
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  const value: AdminIo = { out: (l) => out.push(l), err: (l) => err.push(l), readPassword: async () => '' };
  return { io: value, out, err };
}

describe('admin tool grants (list / revoke a user approval)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'as-admin-grants-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'as.sqlite')}` };
  let as: RunningAuthServer;
  let clientId: string;

  beforeAll(async () => {
    as = await startAuthServer({
      port: 0,
      host: '127.0.0.1',
      resource: RESOURCE,
      storage: { kind: 'sqlite', file: join(dir, 'as.sqlite') },
      logger: silentLogger,
      authorizationServer: { users: [{ username: 'alice', password: 'alice-password' }] },
    });
    const reg = await fetch(`${as.url}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Admin Test',
        application_type: 'web',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
      }),
    });
    clientId = ((await reg.json()) as { client_id: string }).client_id;
  });
  afterAll(async () => {
    await as?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function authorize(): Promise<'consent' | 'code'> {
    const ua = new HeadlessBrowser();
    const { challenge } = pkcePair();
    const url = new URL(`${as.url}/auth`);
    url.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'notes:read',
      resource: RESOURCE,
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    const login = await ua.follow(url.href, REDIRECT);
    if (isUrl(login)) throw new Error('expected the login page');
    const next = await ua.submit(login, { username: 'alice', password: 'alice-password', action: 'login' }, REDIRECT);
    if (isUrl(next)) return 'code';
    const done = await ua.submit(next, { action: 'approve' }, REDIRECT);
    if (!isUrl(done)) throw new Error('expected the redirect');
    return 'consent';
  }

  it('lists the approved client, revokes it, and the user is asked again', async () => {
    expect(await authorize()).toBe('consent');
    expect(await authorize()).toBe('code'); // remembered
    const list = io();
    expect(await runAdmin(['grants', 'list', 'alice'], env, list.io)).toBe(0);
    expect(list.out.join('\n')).toContain(`${clientId}\t${RESOURCE} [notes:read]`);

    // with REDIS_URL the operator's revocation reaches the resource servers like the AS's own
    const redis = await redisClient();
    const prefix = `test-admin-${randomBytes(6).toString('hex')}:`;
    const revokeEnv = redis ? { ...env, REDIS_URL, REDIS_PREFIX: prefix } : env;
    const revoke = io();
    expect(await runAdmin(['grants', 'revoke', 'alice', clientId], revokeEnv, revoke.io), revoke.err.join('\n')).toBe(0);
    // What stops now and what does not (jwt-introspection.ts: introspection sees the grant gone;
    // with REDIS_URL the revocation is published to the resource servers too).
    expect(revoke.out).toEqual([
      `revoked the grant of alice for ${clientId}:`,
      '  now: its refresh tokens and unused authorization codes stop working, and the next authorization asks for consent again;',
      '  access tokens already issued (JWTs) stay valid until they expire, up to 300 s after issue,',
      redis
        ? '  except at resource servers that check them by token introspection (RFC 7662) or follow the Redis revocation signal (REDIS_URL, published now), which refuse them within seconds.'
        : '  except at resource servers that check them by token introspection (RFC 7662), which refuse them now.',
    ]);
    if (redis) {
      const keys = await redis.keys(`${prefix}revoked-grant:*`);
      await Promise.all(keys.map((k) => redis.del(k)));
      redis.destroy();
      expect(keys).toHaveLength(1);
    }
    const empty = io();
    await runAdmin(['grants', 'list', 'alice'], env, empty.io);
    expect(empty.out.join('\n')).toBe('alice has approved no client');
    expect(await authorize()).toBe('consent');
  });

  it('a client_id that looks like an option ("-abc") is still taken as the client_id', async () => {
    const r = io();
    expect(await runAdmin(['grants', 'revoke', 'alice', '-abc_def'], env, r.io)).toBe(1);
    expect(r.err.join('\n')).toContain('has no grant for client "-abc_def"');
  });

  it('user link / unlink an upstream identity (the only way an identity reaches an account without signup)', async () => {
    const link = io();
    expect(await runAdmin(['user', 'link', 'alice', 'https://sso.example', 'sub-123'], env, link.io), link.err.join('\n')).toBe(0);
    expect((await as.server.store.accounts.findByUpstreamIdentity('https://sso.example', 'sub-123'))?.username).toBe('alice');
    await as.server.store.accounts.create({ id: 'zed-id', username: 'zed', passwordHash: null, disabled: false });
    const taken = io();
    expect(await runAdmin(['user', 'link', 'zed', 'https://sso.example', 'sub-123'], env, taken.io)).toBe(1);
    expect(taken.err).toEqual(['error: that identity is already linked to "alice"; nothing changed']);
    expect(await runAdmin(['user', 'unlink', 'alice', 'https://sso.example', 'sub-123'], env, io().io)).toBe(0);
    expect(await as.server.store.accounts.findByUpstreamIdentity('https://sso.example', 'sub-123')).toBeUndefined();
    expect(await runAdmin(['user', 'link', 'alice', 'https://sso.example'], env, io().io)).toBe(2);
  });

  it('revoking a grant that does not exist is a runtime error, printed alone (exit 1); a missing client_id is a usage error (exit 2)', async () => {
    const r = io();
    expect(await runAdmin(['grants', 'revoke', 'alice', 'no-such-client'], env, r.io)).toBe(1);
    expect(r.err).toEqual(['error: alice has no grant for client "no-such-client" (`npm run admin -- grants list alice` lists them)']);
    const missing = io();
    expect(await runAdmin(['grants', 'revoke', 'alice'], env, missing.io)).toBe(2);
    expect(missing.err[0]).toBe('error: grants revoke needs a username and a client_id');
    expect(missing.err[1]).toMatch(/^usage: /);
  });
});
