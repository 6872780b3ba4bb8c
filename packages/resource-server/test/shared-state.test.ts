// The resource server's shared state across replicas: the DPoP replay store (RFC 9449 §11.1)
// and the grant revocation signal on a real Redis, through real HTTP on two replicas.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { revocationChannel, revokedGrantKey, revokedGrantValue } from '@mcp-auth-kit/protocol';
import { makeApp, startIssuerWithKey, rpc, signToken, type StubIssuer, type SigningKey, type TestApp } from './helpers/harness.js';
import { makeProof, proofKey, type ProofKey } from './helpers/dpop.js';
import { ConfigError, createResourceServer, MemoryRevocationList } from '../src/index.js';
import { createRedisRevocationList, RedisDpopReplayStore, type RedisRevocationList } from '../src/redis/index.js';
import { openRedis, shouldRunRedisTests, type TestRedisClient } from './helpers/redis.js';
import { verifierOf } from './helpers/internals.js';

let as: StubIssuer;
let signing: SigningKey;
beforeAll(async () => {
  ({ as, key: signing } = await startIssuerWithKey());
});
afterAll(async () => as.stop());

const token = (claims: Record<string, unknown> = {}) => signToken({ key: signing, issuer: as.issuer, claims });
const call = (t: TestApp, accessToken: string) =>
  request(t.app).post('/mcp').set('Authorization', `Bearer ${accessToken}`).send(rpc('tools/list'));

describe('revocation list hook (in memory)', () => {
  it('a token of a revoked grant is refused even when it is in the validated-token cache', async () => {
    let now = Date.now();
    const revocation = new MemoryRevocationList(() => now);
    const t = makeApp({ authorizationServers: [as.issuer], revocation });
    const live = await token({ grant_id: 'g-1' });
    const other = await token({ grant_id: 'g-2' });
    expect((await call(t, live)).status).toBe(200);
    expect(verifierOf(t.rs).cacheSize).toBe(1);
    // the promise-free cache path stays on with a revocation list, and runs the check too
    expect(typeof verifierOf(t.rs).cached).toBe('function');
    revocation.revoke('g-1', now + 60_000);
    expect(() => verifierOf(t.rs).cached?.(live)).toThrow(expect.objectContaining({ reason: 'grant_revoked' }));
    const refused = await call(t, live);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(t.logs.some((l) => l.details?.reason === 'grant_revoked')).toBe(true);
    expect((await call(t, other)).status).toBe(200);
    // tokens without a grant (client credentials) are not affected
    expect((await call(t, await token())).status).toBe(200);
    now += 60_000;
    expect(revocation.isRevoked('g-1')).toBe(false);
    await t.rs.close();
  });

  it('a revocation option without isRevoked is a configuration error', () => {
    expect(() =>
      createResourceServer({ resource: 'http://localhost:3000/mcp', authorizationServers: [as.issuer], revocation: {} as never }),
    ).toThrow(ConfigError);
  });
});

describe.runIf(await shouldRunRedisTests())('shared state on Redis: two replicas', () => {
  let redis: Awaited<ReturnType<typeof openRedis>>;
  let subscribers: TestRedisClient[];
  let lists: RedisRevocationList[];
  let a: TestApp;
  let b: TestApp;
  let pk: ProofKey;

  /** A revocation list on its own subscriber connection (both closed after the tests); no periodic resync unless asked. */
  const revocationList = async (options: Partial<Parameters<typeof createRedisRevocationList>[0]> = {}) => {
    const subscriber = redis.client.duplicate();
    subscriber.on('error', () => {});
    await subscriber.connect();
    subscribers.push(subscriber);
    const list = await createRedisRevocationList({
      client: redis.client,
      subscriber,
      prefix: redis.prefix,
      resyncIntervalMs: 0,
      ...options,
    });
    lists.push(list);
    return list;
  };
  const replica = async () =>
    makeApp({
      authorizationServers: [as.issuer],
      dpop: { replay: new RedisDpopReplayStore({ client: redis.client, prefix: redis.prefix }) },
      revocation: await revocationList(),
    });
  /** What the authorization server does (its publisher uses the same protocol names). */
  const publishRevocation = async (grantId: string) => {
    await redis.client.set(revokedGrantKey(grantId, redis.prefix), '1', { expiration: { type: 'EX', value: 60 } });
    await redis.client.publish(revocationChannel(redis.prefix), grantId);
  };
  const until = async (check: () => Promise<boolean>, timeoutMs = 2000) => {
    const end = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > end) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  beforeAll(async () => {
    redis = await openRedis();
    subscribers = [];
    lists = [];
    pk = await proofKey('ES256');
    a = await replica();
    b = await replica();
  });
  afterAll(async () => {
    for (const list of lists) await list.close();
    for (const s of subscribers) s.destroy();
    await a?.rs.close();
    await b?.rs.close();
    await redis?.close();
  });

  it('RFC 9449 §11.1: a proof accepted by one replica is refused as a replay by the other', async () => {
    const bound = await token({ cnf: { jkt: pk.jkt } });
    const proof = await makeProof({ key: pk, token: bound });
    const send = (t: TestApp) =>
      request(t.app).post('/mcp').set('Authorization', `DPoP ${bound}`).set('DPoP', proof).send(rpc('tools/list'));
    expect((await send(a)).status).toBe(200);
    const replayed = await send(b);
    expect(replayed.status).toBe(401);
    expect(replayed.headers['www-authenticate']).toContain('error="invalid_dpop_proof"');
    expect(b.logs.some((l) => l.details?.reason === 'dpop_replayed')).toBe(true);
    // a fresh proof with the same token is fine on either replica
    const fresh = await makeProof({ key: pk, token: bound });
    expect(
      (await request(b.app).post('/mcp').set('Authorization', `DPoP ${bound}`).set('DPoP', fresh).send(rpc('tools/list'))).status,
    ).toBe(200);
  });

  it('RFC 9449 §11.1: two replicas racing one proof: exactly one accepts it', async () => {
    const store = new RedisDpopReplayStore({ client: redis.client, prefix: redis.prefix });
    const results = await Promise.all(Array.from({ length: 8 }, () => store.add('race-key', Date.now() + 10_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('a published revocation is refused by both replicas (cached tokens too), within the pub/sub delay', async () => {
    const grantToken = await token({ grant_id: 'grant-pubsub' });
    expect((await call(a, grantToken)).status).toBe(200);
    expect((await call(b, grantToken)).status).toBe(200);
    const started = Date.now();
    await publishRevocation('grant-pubsub');
    await until(async () => (await call(a, grantToken)).status === 401 && (await call(b, grantToken)).status === 401);
    console.log(`revocation reached both replicas in ${Date.now() - started} ms (pub/sub)`);
  });

  it('a replica started after the revocation knows it from the key; a missed message is caught by the resync', async () => {
    await publishRevocation('grant-early');
    const late = await revocationList();
    expect(late.isRevoked('grant-early')).toBe(true);
    // written without a message (as if published while this replica was disconnected)
    const periodic = await revocationList({ resyncIntervalMs: 50 });
    await redis.client.set(revokedGrantKey('grant-silent', redis.prefix), '1', { expiration: { type: 'EX', value: 60 } });
    await until(async () => periodic.isRevoked('grant-silent'));
  });

  it('a Redis flush (or a restart without persistence) never drops a revocation before its time; once past it, the grant leaves', async () => {
    let now = Date.now();
    const list = await revocationList({ clock: () => now });
    const untilSeconds = Math.ceil(now / 1000) + 600;
    await redis.client.set(revokedGrantKey('grant-flushed', redis.prefix), revokedGrantValue(untilSeconds), {
      expiration: { type: 'EX', value: 600 },
    });
    await list.resync();
    expect(list.isRevoked('grant-flushed')).toBe(true);
    // the flush: this test's keys only (others share this Redis)
    await redis.client.del(revokedGrantKey('grant-flushed', redis.prefix));
    await list.resync();
    expect(list.isRevoked('grant-flushed'), 'kept until the time its key named').toBe(true);
    now = untilSeconds * 1000 - 1;
    await list.resync();
    expect(list.isRevoked('grant-flushed')).toBe(true);
    now = untilSeconds * 1000;
    await list.resync();
    expect(list.isRevoked('grant-flushed'), 'every token of the grant has expired: forgotten').toBe(false);
  });

  it('a grant heard only on the channel (its key gone or never read) is kept for retainSeconds, not dropped by a resync', async () => {
    let now = Date.now();
    const list = await revocationList({ retainSeconds: 120, clock: () => now });
    await redis.client.publish(revocationChannel(redis.prefix), 'grant-heard');
    await until(async () => list.isRevoked('grant-heard'));
    await list.resync();
    expect(list.isRevoked('grant-heard')).toBe(true);
    now += 119_000;
    await list.resync();
    expect(list.isRevoked('grant-heard')).toBe(true);
    now += 1_000;
    await list.resync();
    expect(list.isRevoked('grant-heard')).toBe(false);
  });

  it('a resync that cannot reach Redis rejects and leaves the list as it was', async () => {
    let reachable = true;
    const client = {
      sendCommand: (args: string[]) => (reachable ? redis.client.sendCommand(args) : Promise.reject(new Error('connection refused'))),
    };
    const list = await revocationList({ client });
    await publishRevocation('grant-outage');
    await until(async () => list.isRevoked('grant-outage'));
    reachable = false;
    await expect(list.resync()).rejects.toThrow('connection refused');
    expect(list.isRevoked('grant-outage')).toBe(true);
  });

  it('messages that are not grant ids are ignored', async () => {
    await redis.client.publish(revocationChannel(redis.prefix), 'not a grant id *');
    await new Promise((r) => setTimeout(r, 50));
    expect(lists[0]!.isRevoked('not a grant id *')).toBe(false);
  });
});
