import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';

/** The machine's shared Redis (started like PostgreSQL); tests use their own key prefix. */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const makeClient = () => createClient({ url: REDIS_URL });
export type TestRedisClient = ReturnType<typeof makeClient>;

/**
 * Whether to run the Redis tests: when the shared Redis answers. Outside CI they are skipped
 * without it (never faked); under CI (`.ci/run` starts Redis) they run anyway and fail.
 */
export async function shouldRunRedisTests(): Promise<boolean> {
  if (process.env.CI) return true;
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2000, reconnectStrategy: false } });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    if (client.isOpen) client.destroy();
  }
}

/** A connected client, and a prefix no other test run uses. */
export async function openRedis(): Promise<{ client: TestRedisClient; prefix: string; close(): Promise<void> }> {
  const client = makeClient();
  client.on('error', () => {});
  await client.connect();
  const prefix = `test-${randomBytes(6).toString('hex')}:`;
  return {
    client,
    prefix,
    async close() {
      for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
        if (keys.length > 0) await client.del(keys);
      }
      client.destroy();
    },
  };
}
