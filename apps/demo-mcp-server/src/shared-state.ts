import { createRedisRevocationList, RedisDpopReplayStore, type RedisRevocationList } from '@mcp-auth-kit/resource-server/redis';
import { createClient } from 'redis';
import { DEMO_DEFAULTS } from './defaults.js';
import { RedisNotesStore } from './redis-notes-store.js';

/** Everything several demo replicas share through one Redis. */
export interface DemoSharedState {
  notes: RedisNotesStore;
  /** RFC 9449 §11.1 replay store: a proof used at one replica is refused at the others. */
  replay: RedisDpopReplayStore;
  /** Grants the authorization servers revoked (the AS must publish to the same Redis and prefix). */
  revocation: RedisRevocationList;
  close(): Promise<void>;
}

/**
 * Connects to Redis (`REDIS_URL`): two connections, one for commands and one subscribed to the
 * revocation channel. `onError` receives connection errors (the client reconnects by itself).
 */
export async function connectSharedState(
  url: string,
  options: { prefix?: string; onError?: (error: Error) => void } = {},
): Promise<DemoSharedState> {
  const prefix = options.prefix ?? DEMO_DEFAULTS.redisPrefix;
  const onError = options.onError ?? (() => {});
  // a Redis that never answers fails the start (after about 3 s) instead of hanging it; once
  // connected, the client reconnects for as long as it takes
  let connected = false;
  const client = createClient({
    url,
    socket: { reconnectStrategy: (retries, cause) => (!connected && retries >= 5 ? cause : Math.min(100 * 2 ** retries, 3000)) },
  });
  client.on('error', onError);
  await client.connect();
  connected = true;
  const subscriber = client.duplicate();
  subscriber.on('error', onError);
  try {
    await subscriber.connect();
    const revocation = await createRedisRevocationList({ client, subscriber, prefix, onError: (e) => onError(e as Error) });
    return {
      notes: new RedisNotesStore({ client, prefix }),
      replay: new RedisDpopReplayStore({ client, prefix }),
      revocation,
      async close() {
        await revocation.close().catch(() => {});
        subscriber.destroy();
        client.destroy();
      },
    };
  } catch (error) {
    subscriber.destroy();
    client.destroy();
    throw error;
  }
}
