import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { TEST_REDIS_URL } from '@mcp-auth-kit/test-utils';

export { shouldRunRedisTests } from '@mcp-auth-kit/test-utils';
/** The machine's shared Redis (started by `.ci/run` when it does not answer). */
export const REDIS_URL = TEST_REDIS_URL;

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
