import { DEFAULT_REVOCATION_PREFIX, isGrantId, revocationChannel, revokedGrantKeyPrefix, revokedGrantUntil } from '@mcp-auth-kit/protocol';
import type { RevocationList } from '../types.js';
import { scanKeys, type RedisCommandConnection, type RedisSubscriberConnection } from './connection.js';

/** Default time between two full reads of the revoked-grant keys. */
export const DEFAULT_REVOCATION_RESYNC_MS = 5_000;

/**
 * Default time a grant is kept when nothing says until when (a pub/sub message, or a key written
 * by an older authorization server): an hour, longer than the kit's default access-token
 * lifetime (300 s) plus clock tolerance. A key that names its time is kept until then.
 */
export const DEFAULT_REVOCATION_RETAIN_SECONDS = 3_600;

/** `MGET` batch size: one round trip per this many revoked grants at each resync. */
const MGET_BATCH = 500;

export interface RedisRevocationListOptions {
  /** A connected client for commands (`SCAN`, `MGET`). */
  client: RedisCommandConnection;
  /** A second connected client, used only to subscribe (`client.duplicate()`). */
  subscriber: RedisSubscriberConnection;
  /** Key and channel prefix, the same as the authorization server's (default `mcp-auth-kit:`). */
  prefix?: string;
  /**
   * How often every revoked-grant key is read again (default 5 000 ms): the bound for a
   * revocation published while this replica was disconnected from Redis. 0 turns it off.
   */
  resyncIntervalMs?: number;
  /**
   * How long a grant is kept when its key does not say (default 3 600 s): set it to at least
   * your longest access-token lifetime plus 300 s if that is longer.
   */
  retainSeconds?: number;
  /** Background failures (a resync that could not reach Redis; the next one retries). */
  onError?: (error: unknown) => void;
  /** Epoch-millisecond clock (tests move time with it). Default `Date.now`. */
  clock?: () => number;
}

/** A {@link RevocationList} kept in step with the authorization servers through Redis. */
export interface RedisRevocationList extends RevocationList {
  /** Grants known revoked now. */
  readonly size: number;
  /** Reads every revoked-grant key again (also runs every `resyncIntervalMs`). */
  resync(): Promise<void>;
  /** Stops the timer and unsubscribes (the connections stay the caller's to close). */
  close(): Promise<void>;
}

/**
 * Subscribes to the revocation channel, then reads every revoked-grant key (the AS keeps one per
 * revoked grant until its tokens have expired), so a replica that starts after a revocation
 * knows it before its first request. A published grant is refused at once, by an in-memory Map
 * lookup on every request (no Redis round trip on the hot path).
 *
 * A resync merges what Redis holds into what this replica knows; it never replaces it. A grant
 * leaves only once its own time has passed and Redis no longer holds it, so a Redis restart
 * without persistence, a failover or a flush cannot make a revoked token work again here.
 */
export async function createRedisRevocationList(options: RedisRevocationListOptions): Promise<RedisRevocationList> {
  const prefix = options.prefix ?? DEFAULT_REVOCATION_PREFIX;
  const channel = revocationChannel(prefix);
  const keyPrefix = revokedGrantKeyPrefix(prefix);
  const clock = options.clock ?? Date.now;
  const retainMs = Math.max(0, options.retainSeconds ?? DEFAULT_REVOCATION_RETAIN_SECONDS) * 1000;
  // grant id → epoch ms until which it is kept
  const revoked = new Map<string, number>();
  let closed = false;

  const keep = (grantId: string, untilMs: number) => {
    if (untilMs > (revoked.get(grantId) ?? 0)) revoked.set(grantId, untilMs);
  };

  const onMessage = (message: string) => {
    if (isGrantId(message)) keep(message, clock() + retainMs);
  };

  /** Every revoked grant in Redis, with the time its key names (undefined: none). */
  const readAll = async (): Promise<Map<string, number | undefined>> => {
    const grantIds = (await scanKeys(options.client, keyPrefix)).map((key) => key.slice(keyPrefix.length)).filter(isGrantId);
    const found = new Map<string, number | undefined>();
    for (let i = 0; i < grantIds.length; i += MGET_BATCH) {
      const batch = grantIds.slice(i, i + MGET_BATCH);
      const values = (await options.client.sendCommand(['MGET', ...batch.map((id) => `${keyPrefix}${id}`)])) as unknown[];
      batch.forEach((grantId, j) => {
        // a key that expired between SCAN and MGET reads as null: its grant is still merged
        // below (a late grant is kept too long, never too short)
        found.set(grantId, revokedGrantUntil(values[j]));
      });
    }
    return found;
  };

  let running: Promise<void> | undefined;
  const resync = (): Promise<void> => {
    running ??= (async () => {
      try {
        const found = await readAll();
        const now = clock();
        for (const [grantId, until] of found) keep(grantId, until === undefined ? now + retainMs : until * 1000);
        // only once the read succeeded: an unreachable Redis never empties the list
        for (const [grantId, until] of revoked) if (until <= now && !found.has(grantId)) revoked.delete(grantId);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  // subscribe first: a revocation published between the read and the subscription is not lost
  await options.subscriber.subscribe(channel, onMessage);
  await resync();

  const interval = options.resyncIntervalMs ?? DEFAULT_REVOCATION_RESYNC_MS;
  const timer =
    interval > 0
      ? setInterval(() => {
          if (!closed) resync().catch((error: unknown) => options.onError?.(error));
        }, interval)
      : undefined;
  // never keeps a process alive on its own
  timer?.unref();

  return {
    isRevoked: (grantId) => revoked.has(grantId),
    get size() {
      return revoked.size;
    },
    resync,
    async close() {
      if (closed) return;
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      await options.subscriber.unsubscribe(channel, onMessage);
    },
  };
}
