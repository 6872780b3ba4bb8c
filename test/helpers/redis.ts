import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';

/** The machine's shared Redis (started by `.ci/run` when it does not answer). */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

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
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    if (client.isOpen) client.destroy();
  }
}

/** A key prefix no other run uses, and how to delete what was written under it. */
export function redisPrefix(name: string): { prefix: string; drop(): Promise<void> } {
  const prefix = `test-${name}-${randomBytes(6).toString('hex')}:`;
  return {
    prefix,
    async drop() {
      const client = createClient({ url: REDIS_URL });
      client.on('error', () => {});
      await client.connect();
      try {
        for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
          if (keys.length > 0) await client.del(keys);
        }
      } finally {
        client.destroy();
      }
    },
  };
}
