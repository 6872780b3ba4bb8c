/**
 * Revocation is durable (issue 40 item 5). RFC 7009 §2: once the AS answers the revocation
 * request, the tokens of the grant are invalid; with resource servers that learn it through
 * Redis (`REDIS_URL`), that must hold whatever Redis does. Attacks tried here, on loopback:
 *
 * - Redis loses its data after the revocation (a flush of this test's prefix stands for a
 *   restart without persistence or a failover): the revoked token stays refused by the running
 *   resource server, and a replica started afterwards learns the revocation from the AS, which
 *   keeps it in its own store and writes it to Redis again.
 * - Redis is unreachable when the grant is revoked (a loopback TCP proxy in front of the shared
 *   Redis, stopped): the RFC 7009 answer does not wait for Redis (< 1 s), and once Redis answers
 *   again the revocation reaches the resource server.
 */
import { createServer as createTcpServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { createRedisRevocationList, type RedisRevocationList } from '@mcp-auth-kit/resource-server/redis';
import { listenProtectedEndpoint, post, type ProtectedEndpoint } from '../faults/helpers/resource-server.js';
import { REDIS_URL, redisPrefix, shouldRunRedisTests } from '../helpers/redis.js';
import { fullFlow, postForm, registerClient, startAttackStack, type AttackStack } from './helpers/support.js';

/** A TCP relay on loopback to the shared Redis, which a test stops (Redis unreachable) and restarts on the same port. */
async function startRedisRelay(): Promise<{ url: string; stop(): Promise<void>; start(): Promise<void> }> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const start = async () => {
    server = createTcpServer((inbound) => {
      const outbound = connect(Number(target.port || 6379), target.hostname);
      for (const s of [inbound, outbound]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {
          inbound.destroy();
          outbound.destroy();
        });
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    async stop() {
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

const until = async (check: () => Promise<boolean> | boolean, timeoutMs: number, what: string) => {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe.runIf(await shouldRunRedisTests())('attack: a revoked token works again after Redis loses or misses the revocation', () => {
  const redis = redisPrefix('revocation-durability');
  const client = createClient({ url: REDIS_URL });
  client.on('error', () => {});
  const subscribers: (typeof client)[] = [];
  const lists: RedisRevocationList[] = [];
  let relay: Awaited<ReturnType<typeof startRedisRelay>>;
  let endpoint: ProtectedEndpoint;
  let stack: AttackStack;
  let list: RedisRevocationList;
  let clientId: string;

  /** A resource-server replica's revocation list, straight on Redis (not through the relay). */
  const revocationList = async () => {
    const subscriber = client.duplicate();
    subscriber.on('error', () => {});
    await subscriber.connect();
    subscribers.push(subscriber);
    const created = await createRedisRevocationList({ client, subscriber, prefix: redis.prefix, resyncIntervalMs: 100 });
    lists.push(created);
    return created;
  };
  const flushPrefix = async () => {
    for await (const keys of client.scanIterator({ MATCH: `${redis.prefix}*`, COUNT: 1000 })) if (keys.length > 0) await client.del(keys);
  };
  const revoke = (refreshToken: string) =>
    postForm(stack.metadata.revocation_endpoint!, { token: refreshToken, token_type_hint: 'refresh_token', client_id: clientId });

  beforeAll(async () => {
    await client.connect();
    relay = await startRedisRelay();
    endpoint = await listenProtectedEndpoint();
    stack = await startAttackStack({
      extraResources: [endpoint.resource],
      redisUrl: relay.url,
      redisPrefix: redis.prefix,
      redisRepublishIntervalMs: 200,
    });
    list = await revocationList();
    endpoint.protect(stack.issuer, { revocation: list });
    clientId = await registerClient(stack);
  });
  afterAll(async () => {
    for (const l of lists) await l.close();
    for (const s of subscribers) s.destroy();
    await endpoint?.close();
    await stack?.close();
    await relay?.stop().catch(() => {});
    await redis.drop();
    client.destroy();
  });

  it('RFC 7009 §2: Redis flushed after the revocation: the running resource server keeps refusing the token, and a replica started after the flush learns it from the AS', async () => {
    const tokens = await fullFlow(stack, clientId, { resource: endpoint.resource });
    expect((await post(endpoint.resource, tokens.access_token)).status).toBe(200);
    expect((await revoke(tokens.refresh_token!)).status).toBe(200);
    await until(async () => (await post(endpoint.resource, tokens.access_token)).status === 401, 2000, 'revocation reaches the RS');

    await flushPrefix();
    // several resyncs of the running replica see an empty Redis
    await list.resync();
    const refused = await post(endpoint.resource, tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatch(/error="invalid_token"/);

    // a replica started after the flush: the AS refills Redis from its store
    const late = await revocationList();
    const grantId = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()).grant_id as string;
    await until(() => late.isRevoked(grantId), 3000, 'the AS republishes the revocation after the flush');
    expect((await post(endpoint.resource, tokens.access_token)).status).toBe(401);
  });

  it('RFC 7009 §2: Redis unreachable when the grant is revoked: the revocation answers at once (< 1 s), and the resource server refuses the token once Redis is back', async () => {
    const tokens = await fullFlow(stack, clientId, { resource: endpoint.resource });
    expect((await post(endpoint.resource, tokens.access_token)).status).toBe(200);
    await relay.stop();
    let reachable = false;
    try {
      const started = performance.now();
      const answer = await fetch(stack.metadata.revocation_endpoint!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: tokens.refresh_token!, token_type_hint: 'refresh_token', client_id: clientId }),
        signal: AbortSignal.timeout(5000),
      }).then(
        (res) => res.status,
        (error: Error) => error.name,
      );
      const elapsed = performance.now() - started;
      expect(answer).toBe(200);
      expect(elapsed).toBeLessThan(1000);
      await relay.start();
      reachable = true;
      // the AS client reconnects (back-off up to 3 s), then publishes what it holds
      await until(
        async () => (await post(endpoint.resource, tokens.access_token)).status === 401,
        10_000,
        'revocation after Redis is back',
      );
    } finally {
      if (!reachable) await relay.start();
    }
  });
});
