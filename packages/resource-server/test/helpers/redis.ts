import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { TEST_REDIS_URL } from '@mcp-auth-kit/test-utils';

export { shouldRunRedisTests } from '@mcp-auth-kit/test-utils';
/** The machine's shared Redis (started like PostgreSQL); tests use their own key prefix. */
export const REDIS_URL = TEST_REDIS_URL;

const makeClient = () => createClient({ url: REDIS_URL });
export type TestRedisClient = ReturnType<typeof makeClient>;

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
