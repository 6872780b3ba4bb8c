import { DEFAULT_ACCESS_TOKEN_TTL, type AuthorizationServerConfig, type Logger } from '@mcp-auth-kit/authorization-server';
import { createRedisRevocationPublisher } from '@mcp-auth-kit/authorization-server/redis';
import { createClient } from 'redis';

/** The revocation signal of one process: what `openStore` is given, and how to stop it. */
export interface RevocationSignal {
  /** For `openStore(…, { onGrantRevoked })`; never rejects (a failure is logged). */
  publish(grantId: string): Promise<void>;
  close(): Promise<void>;
}

/** The longest access-token lifetime the configuration gives (server-wide or per resource). */
export function longestAccessTokenTtl(config: Partial<Pick<AuthorizationServerConfig, 'accessTokenTTL' | 'resources'>>): number {
  return Math.max(config.accessTokenTTL ?? DEFAULT_ACCESS_TOKEN_TTL, ...(config.resources ?? []).map((r) => r.accessTokenTTL ?? 0));
}

/**
 * Connects to Redis (`REDIS_URL`) and publishes every revoked grant there. A publish that fails
 * is logged (the grant is revoked in the store all the same; resource servers then learn it by
 * introspection or token expiry). Connection errors are logged; the client reconnects itself.
 */
export async function connectRevocationSignal(
  url: string,
  prefix: string | undefined,
  accessTokenTtlSeconds: number,
  logger: Logger,
): Promise<RevocationSignal> {
  // a Redis that never answers fails the start (after about 3 s) instead of hanging it; once
  // connected, the client reconnects for as long as it takes
  let connected = false;
  const client = createClient({
    url,
    socket: { reconnectStrategy: (retries, cause) => (!connected && retries >= 5 ? cause : Math.min(100 * 2 ** retries, 3000)) },
  });
  // never the URL (it may hold a password): the client's own message names host and port
  client.on('error', (error: Error) => logger.warn('redis connection error', { error: error.message }));
  await client.connect();
  connected = true;
  const publish = createRedisRevocationPublisher({ client, ...(prefix !== undefined && { prefix }), accessTokenTtlSeconds });
  return {
    async publish(grantId) {
      try {
        await publish(grantId);
      } catch (error) {
        logger.warn('grant revocation not published to resource servers', { error: (error as Error).message });
      }
    },
    async close() {
      client.destroy();
    },
  };
}
