import { DEFAULT_REVOCATION_PREFIX, isGrantId, revocationChannel, revokedGrantKey, revokedGrantValue } from '@mcp-auth-kit/protocol';
import { DEFAULT_ACCESS_TOKEN_TTL } from '../provider/provider.js';
import { createRevocationOutbox, type RevocationChannel, type RevocationOutbox } from '../tokens/revocation-outbox.js';

/** A connection that runs commands: node-redis's `sendCommand(['SET', …])` fits it as it is. */
export interface RedisCommandConnection {
  sendCommand(args: string[]): Promise<unknown>;
}

export interface RedisRevocationPublisherOptions {
  /** A connected node-redis client (`redis` 5 or 6), or anything with `sendCommand`. */
  client: RedisCommandConnection;
  /** Key and channel prefix; the resource servers' revocation list uses the same (default `mcp-auth-kit:`). */
  prefix?: string;
  /**
   * The longest access-token lifetime this server issues, in seconds (default
   * `DEFAULT_ACCESS_TOKEN_TTL`): how long a revoked grant must stay known.
   */
  accessTokenTtlSeconds?: number;
}

/**
 * Resource servers accept `exp` up to their clock tolerance late (at most 300 s): the mark
 * outlives the tokens by that much.
 */
const CLOCK_TOLERANCE_MARGIN_SECONDS = 300;

/** How long a revoked grant must stay known: the longest token lifetime plus clock tolerance. */
export function revocationRetentionSeconds(accessTokenTtlSeconds: number = DEFAULT_ACCESS_TOKEN_TTL): number {
  return Math.ceil(accessTokenTtlSeconds) + CLOCK_TOLERANCE_MARGIN_SECONDS;
}

/**
 * The revocation signal's names on Redis: a key per revoked grant whose value and TTL say until
 * when (a resource-server replica started later reads it), then the grant id on the channel
 * (running replicas refuse its tokens at once). Key first: a replica that reads the keys after
 * hearing nothing still finds it.
 */
export function createRedisRevocationChannel(
  options: Pick<RedisRevocationPublisherOptions, 'client' | 'prefix'>,
  clock: () => number = Date.now,
): RevocationChannel {
  const prefix = options.prefix ?? DEFAULT_REVOCATION_PREFIX;
  const channel = revocationChannel(prefix);
  const refill = async (grantId: string, until: number) => {
    const ttl = until - Math.floor(clock() / 1000);
    if (!isGrantId(grantId) || ttl <= 0) return;
    await options.client.sendCommand(['SET', revokedGrantKey(grantId, prefix), revokedGrantValue(until), 'EX', String(ttl)]);
  };
  return {
    refill,
    async announce(grantId, until) {
      if (!isGrantId(grantId)) return;
      await refill(grantId, until);
      await options.client.sendCommand(['PUBLISH', channel, grantId]);
    },
  };
}

/**
 * The authorization server's side of the revocation signal, for `openStore(…, { onGrantRevoked })`,
 * without a record in the store: the grant is written to Redis while the call waits, and a
 * Redis that is down or loses its data loses the revocation. Prefer
 * {@link createRedisRevocationSignal}.
 */
export function createRedisRevocationPublisher(options: RedisRevocationPublisherOptions): (grantId: string) => Promise<void> {
  const channel = createRedisRevocationChannel(options);
  const retention = revocationRetentionSeconds(options.accessTokenTtlSeconds);
  return (grantId) => channel.announce(grantId, Math.floor(Date.now() / 1000) + retention);
}

export interface RedisRevocationSignalOptions extends RedisRevocationPublisherOptions {
  /** With node-redis's `on`, every `ready` (each reconnect) refills Redis from the store's records. */
  client: RedisCommandConnection & { on?(event: 'ready', listener: () => void): unknown };
  /** Every record is written to Redis again this often (default 30 000 ms; 0 turns it off). */
  republishIntervalMs?: number;
  /** Bound on one Redis write (default 2 000 ms); a slower one is retried. */
  deliveryTimeoutMs?: number;
  /** Background failures (Redis unreachable: retried; a record the store could not write). */
  onError?: (error: unknown) => void;
  /** Epoch-millisecond clock. Default `Date.now`. */
  clock?: () => number;
}

/**
 * The durable revocation signal on Redis: `revoked` for `openStore(…, { onGrantRevoked })`
 * records the grant in the store and publishes it in the background (retried until Redis
 * answers); `useStore(store.kv)` once the store is open starts refilling Redis from the records
 * (on every reconnect and every `republishIntervalMs`). See `revocation-outbox.ts`.
 */
export function createRedisRevocationSignal(options: RedisRevocationSignalOptions): RevocationOutbox {
  const clock = options.clock ?? Date.now;
  const outbox = createRevocationOutbox({
    channel: createRedisRevocationChannel(options, clock),
    retentionSeconds: revocationRetentionSeconds(options.accessTokenTtlSeconds),
    ...(options.republishIntervalMs !== undefined && { republishIntervalMs: options.republishIntervalMs }),
    ...(options.deliveryTimeoutMs !== undefined && { deliveryTimeoutMs: options.deliveryTimeoutMs }),
    ...(options.onError !== undefined && { onError: options.onError }),
    clock,
  });
  options.client.on?.('ready', () => {
    outbox.republish().catch((error: unknown) => options.onError?.(error));
  });
  return outbox;
}
