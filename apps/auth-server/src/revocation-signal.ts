import { DEFAULT_ACCESS_TOKEN_TTL, type AuthorizationServerConfig, type Logger, type Store } from '@mcp-auth-kit/authorization-server';
import { createRedisRevocationSignal } from '@mcp-auth-kit/authorization-server/redis';
import { createClient } from 'redis';
import { APP_DEFAULTS } from './defaults.js';

/** The revocation signal of one process: what `openStore` is given, and how to stop it. */
export interface RevocationSignal {
  /**
   * For `openStore(…, { onGrantRevoked })`: records the grant in the store and publishes it in
   * the background (retried until Redis answers). Never rejects, never waits on Redis.
   */
  publish(grantId: string): Promise<void>;
  /** The open store: its records are written to Redis again on every reconnect and periodically. */
  useStore(store: Store): void;
  /** Waits (at most `timeoutMs`) for queued publications, then disconnects. */
  close(timeoutMs?: number): Promise<void>;
}

export interface RevocationSignalOptions {
  /** Every record is written to Redis again this often (default 30 000 ms). */
  republishIntervalMs?: number;
}

/** The longest access-token lifetime the configuration gives (server-wide or per resource). */
export function longestAccessTokenTtl(config: Partial<Pick<AuthorizationServerConfig, 'accessTokenTTL' | 'resources'>>): number {
  return Math.max(config.accessTokenTTL ?? DEFAULT_ACCESS_TOKEN_TTL, ...(config.resources ?? []).map((r) => r.accessTokenTTL ?? 0));
}

/**
 * Connects to Redis (`REDIS_URL`) and publishes every revoked grant there. The grant is first
 * recorded in the store (kept until its tokens have expired), so a revocation made while Redis
 * is down, or lost by Redis (restart without persistence, failover, flush), reaches the resource
 * servers once Redis answers: on reconnect and at each periodic refill. Failures are logged.
 */
export async function connectRevocationSignal(
  url: string,
  prefix: string | undefined,
  accessTokenTtlSeconds: number,
  logger: Logger,
  options: RevocationSignalOptions = {},
): Promise<RevocationSignal> {
  // a Redis that never answers fails the start (after about 3 s) instead of hanging it; once
  // connected, the client reconnects for as long as it takes
  let connected = false;
  const client = createClient({
    url,
    // no offline queue: a command while disconnected fails at once and the outbox retries it,
    // instead of piling up in the client
    disableOfflineQueue: true,
    socket: { reconnectStrategy: (retries, cause) => (!connected && retries >= 5 ? cause : Math.min(100 * 2 ** retries, 3000)) },
  });
  // never the URL (it may hold a password): the client's own message names host and port
  client.on('error', (error: Error) => logger.warn('redis connection error', { error: error.message }));
  await client.connect();
  connected = true;
  let failures = 0;
  const signal = createRedisRevocationSignal({
    client,
    ...(prefix !== undefined && { prefix }),
    accessTokenTtlSeconds,
    ...(options.republishIntervalMs !== undefined && { republishIntervalMs: options.republishIntervalMs }),
    onError: (error) => {
      // once per outage, not once per retry
      if (failures++ === 0)
        logger.warn('grant revocation not yet published to resource servers (retrying)', { error: (error as Error).message });
    },
  });
  client.on('ready', () => {
    if (failures > 0) logger.info('redis reachable again: revocations republished', { failures });
    failures = 0;
  });
  return {
    publish: (grantId) => signal.revoked(grantId),
    useStore(store) {
      signal.useStore(store.kv);
      // records left by an earlier run, another instance or the admin tool
      signal.republish().catch(() => {});
    },
    async close(timeoutMs = APP_DEFAULTS.revocationCloseTimeoutMs) {
      if (signal.pending > 0 && !(await signal.settled(timeoutMs))) {
        logger.warn('revocations not published to Redis before exit (the store keeps them: the next start republishes)', {
          pending: signal.pending,
        });
      }
      signal.close();
      client.destroy();
    },
  };
}
