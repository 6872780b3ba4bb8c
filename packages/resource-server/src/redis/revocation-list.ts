import { DEFAULT_REVOCATION_PREFIX, isGrantId, revocationChannel, revokedGrantKeyPrefix } from '@mcp-auth-kit/protocol';
import type { RevocationList } from '../revocation.js';
import { scanKeys, type RedisCommandConnection, type RedisSubscriberConnection } from './connection.js';

/** Default time between two full reads of the revoked-grant keys. */
export const DEFAULT_REVOCATION_RESYNC_MS = 5_000;

export interface RedisRevocationListOptions {
  /** A connected client for commands (`SCAN`). */
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
  /** Background failures (a resync that could not reach Redis; the next one retries). */
  onError?: (error: unknown) => void;
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
 * revoked grant for the longest access-token lifetime), so a replica that starts after a
 * revocation knows it before its first request. A published grant is refused at once, by an
 * in-memory Set lookup on every request (no Redis round trip on the hot path); a key that
 * expired leaves the Set at the next resync, when every token of that grant has expired anyway.
 */
export async function createRedisRevocationList(options: RedisRevocationListOptions): Promise<RedisRevocationList> {
  const prefix = options.prefix ?? DEFAULT_REVOCATION_PREFIX;
  const channel = revocationChannel(prefix);
  const keyPrefix = revokedGrantKeyPrefix(prefix);
  let revoked = new Set<string>();
  // ids heard while a resync runs: its SCAN may have passed their key already
  let heard: Set<string> | undefined;
  let closed = false;

  const onMessage = (message: string) => {
    if (!isGrantId(message)) return;
    revoked.add(message);
    heard?.add(message);
  };

  let running: Promise<void> | undefined;
  const resync = (): Promise<void> => {
    running ??= (async () => {
      const during = new Set<string>();
      heard = during;
      try {
        const next = new Set<string>();
        for (const key of await scanKeys(options.client, keyPrefix)) {
          const grantId = key.slice(keyPrefix.length);
          if (isGrantId(grantId)) next.add(grantId);
        }
        for (const grantId of during) next.add(grantId);
        revoked = next;
      } finally {
        heard = undefined;
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
