/**
 * The revocation signal: every way a grant ends reaches `onGrantRevoked` (RFC 7009 revocation,
 * refresh-token reuse, authorization-code replay, the account page / admin tool), and the Redis
 * publisher writes the key (kept for the longest token lifetime) and publishes the grant id.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revocationChannel, revokedGrantKey, revokedGrantUntil } from '@mcp-auth-kit/protocol';
import { DEFAULT_ACCESS_TOKEN_TTL, REVOCATION_RECORD_NAMESPACE, revokeRememberedGrant } from '../src/index.js';
import { createRedisRevocationPublisher, createRedisRevocationSignal, type RevocationOutbox } from '../src/redis/index.js';
import { openStore } from '../src/storage/index.js';
import type { Store } from '../src/storage/types.js';
import { decodeJwt, registerClient, RESOURCE, startAs, tokenRequest, type RunningAs } from './helpers/as.js';
import { authorizeAuto, exchangeCode } from './helpers/flow.js';
import { shouldRunRedisTests, TEST_REDIS_URL } from '@mcp-auth-kit/test-utils';

describe('onGrantRevoked: every way a grant ends', () => {
  const revoked: string[] = [];
  let store: Store;
  let t: RunningAs;

  beforeAll(async () => {
    store = await openStore({ kind: 'memory' }, { onGrantRevoked: (grantId) => void revoked.push(grantId) });
    t = await startAs({ devAutoLogin: 'alice', storage: store, refreshTokens: { reuseGraceSeconds: 0 } });
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  const grantOf = (accessToken: string) => decodeJwt(accessToken).payload.grant_id as string;
  const tokens = async (clientId: string) => {
    const flow = await authorizeAuto(t.url, clientId);
    const res = await exchangeCode(t.url, clientId, flow);
    expect(res.status).toBe(200);
    return { flow, body: res.body as { access_token: string; refresh_token: string } };
  };

  it('RFC 7009 §2.1: revoking the refresh token ends the grant and signals it', async () => {
    const clientId = (await registerClient(t.url)).body.client_id as string;
    const { body } = await tokens(clientId);
    const res = await fetch(`${t.url}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: body.refresh_token, client_id: clientId }),
    });
    expect(res.status).toBe(200);
    expect(revoked).toContain(grantOf(body.access_token));
  });

  it('OAuth 2.1 §4.3.1: a rotated refresh token presented again ends the grant and signals it', async () => {
    const clientId = (await registerClient(t.url)).body.client_id as string;
    const { body } = await tokens(clientId);
    const refresh = () =>
      tokenRequest(t.url, { grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: clientId, resource: RESOURCE });
    expect((await refresh()).status).toBe(200);
    expect((await refresh()).status).toBe(400);
    expect(revoked).toContain(grantOf(body.access_token));
  });

  it('RFC 6749 §4.1.2: a replayed authorization code ends the grant and signals it', async () => {
    const clientId = (await registerClient(t.url)).body.client_id as string;
    const { flow, body } = await tokens(clientId);
    const replay = await exchangeCode(t.url, clientId, flow);
    expect(replay.status).toBe(400);
    expect(revoked).toContain(grantOf(body.access_token));
  });

  it('a user (account page) or an operator (admin tool) withdrawing the approval signals it', async () => {
    const clientId = (await registerClient(t.url)).body.client_id as string;
    const { body } = await tokens(clientId);
    const account = await store.accounts.findByUsername('alice');
    expect(await revokeRememberedGrant(store, account!.id, clientId)).toBe(true);
    expect(revoked).toContain(grantOf(body.access_token));
  });

  it('a failing signal never fails the revocation (it goes to onError)', async () => {
    const errors: unknown[] = [];
    const failing = await openStore(
      { kind: 'memory' },
      {
        onGrantRevoked: async () => {
          throw new Error('redis down');
        },
        onError: (e) => void errors.push(e),
      },
    );
    await failing.adapter('Grant').upsert('g1', { accountId: 'a', clientId: 'c' } as never, 60);
    await failing.adapter('Grant').destroy('g1');
    expect(await failing.adapter('Grant').find('g1')).toBeUndefined();
    expect(errors).toHaveLength(1);
    await failing.close();
  });
});

const REDIS_URL = TEST_REDIS_URL;

describe.runIf(await shouldRunRedisTests())('createRedisRevocationPublisher (real Redis)', () => {
  it('writes the key with the token lifetime plus the clock-tolerance margin, then publishes the grant id', async () => {
    const prefix = `test-${randomBytes(6).toString('hex')}:`;
    const client = createClient({ url: REDIS_URL });
    client.on('error', () => {});
    await client.connect();
    const subscriber = client.duplicate();
    await subscriber.connect();
    const heard: string[] = [];
    await subscriber.subscribe(revocationChannel(prefix), (m) => void heard.push(m));
    try {
      const publish = createRedisRevocationPublisher({ client, prefix });
      await publish('grant-A1');
      await publish('not a grant id'); // ignored
      const ttl = await client.ttl(revokedGrantKey('grant-A1', prefix));
      expect(ttl).toBeGreaterThan(DEFAULT_ACCESS_TOKEN_TTL);
      expect(ttl).toBeLessThanOrEqual(DEFAULT_ACCESS_TOKEN_TTL + 300);
      for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(heard).toEqual(['grant-A1']);
      expect(await client.exists(revokedGrantKey('not a grant id', prefix))).toBe(0);
    } finally {
      await client.del(revokedGrantKey('grant-A1', prefix));
      subscriber.destroy();
      client.destroy();
    }
  });
});

describe.runIf(await shouldRunRedisTests())('createRedisRevocationSignal: the revocation is durable (real Redis)', () => {
  const prefix = `test-${randomBytes(6).toString('hex')}:`;
  const client = createClient({ url: REDIS_URL });
  client.on('error', () => {});
  let down = false;
  /** The real connection, or one that fails like an unreachable Redis. */
  const flaky = {
    sendCommand: (args: string[]) => (down ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')) : client.sendCommand(args)),
  };
  const stores: Store[] = [];
  const signals: RevocationOutbox[] = [];
  const open = async (options: { republishIntervalMs?: number } = {}) => {
    const errors: unknown[] = [];
    const signal = createRedisRevocationSignal({
      client: flaky,
      prefix,
      republishIntervalMs: 0,
      ...options,
      onError: (e) => void errors.push(e),
    });
    const store = await openStore({ kind: 'memory' }, { onGrantRevoked: (grantId) => signal.revoked(grantId) });
    signal.useStore(store.kv);
    stores.push(store);
    signals.push(signal);
    return { signal, store, errors };
  };
  const revoke = async (store: Store, grantId: string) => {
    await store.adapter('Grant').upsert(grantId, { accountId: 'a', clientId: 'c' } as never, 600);
    await store.adapter('Grant').destroy(grantId);
  };
  const key = (grantId: string) => revokedGrantKey(grantId, prefix);

  beforeAll(async () => {
    await client.connect();
  });
  afterAll(async () => {
    for (const s of signals) s.close();
    for (const s of stores) await s.close();
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (keys.length > 0) await client.del(keys);
    client.destroy();
  });

  it('records the grant in the store until its tokens have expired, writes the key with that time as value and TTL, and publishes it', async () => {
    const { signal, store } = await open();
    const before = Math.floor(Date.now() / 1000);
    await revoke(store, 'grant-D1');
    const record = await store.kv.get<{ until: number }>(REVOCATION_RECORD_NAMESPACE, 'grant-D1');
    const retention = DEFAULT_ACCESS_TOKEN_TTL + 300;
    expect(record?.until).toBeGreaterThanOrEqual(before + retention);
    expect(record?.until).toBeLessThanOrEqual(before + retention + 2);
    expect(await signal.settled(2000)).toBe(true);
    expect(revokedGrantUntil(await client.get(key('grant-D1')))).toBe(record?.until);
    expect(await client.ttl(key('grant-D1'))).toBeGreaterThan(retention - 5);
  });

  it('Redis unreachable: the revocation does not wait for it (recorded, queued, retried), and lands once Redis answers', async () => {
    const { signal, store, errors } = await open();
    down = true;
    try {
      const started = performance.now();
      await revoke(store, 'grant-D2');
      expect(performance.now() - started).toBeLessThan(200);
      expect(await store.kv.get(REVOCATION_RECORD_NAMESPACE, 'grant-D2')).toBeDefined();
      expect(signal.pending).toBe(1);
      expect(await signal.settled(300)).toBe(false);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      down = false;
    }
    // the retry (back-off from 250 ms) delivers it
    expect(await signal.settled(5000)).toBe(true);
    expect(await client.exists(key('grant-D2'))).toBe(1);
  });

  it('a Redis that lost its data is refilled from the store: by republish() (on reconnect) and by the periodic refill, records of other instances included', async () => {
    const { signal, store } = await open();
    await revoke(store, 'grant-D3');
    expect(await signal.settled(2000)).toBe(true);
    // a record written by another instance or the admin tool, never delivered from here
    const until = Math.floor(Date.now() / 1000) + 120;
    await store.kv.set(REVOCATION_RECORD_NAMESPACE, 'grant-D4', { until }, 120);
    // the flush (this test's keys only: the Redis is shared)
    await client.del([key('grant-D3'), key('grant-D4')]);
    expect(await signal.republish()).toBe(2);
    expect(await client.exists(key('grant-D3'))).toBe(1);
    expect(revokedGrantUntil(await client.get(key('grant-D4')))).toBe(until);
    expect(await client.ttl(key('grant-D4'))).toBeLessThanOrEqual(120);

    const periodic = await open({ republishIntervalMs: 50 });
    await periodic.store.kv.set(REVOCATION_RECORD_NAMESPACE, 'grant-D5', { until }, 120);
    for (let i = 0; i < 100 && (await client.exists(key('grant-D5'))) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await client.exists(key('grant-D5'))).toBe(1);
  });
});
