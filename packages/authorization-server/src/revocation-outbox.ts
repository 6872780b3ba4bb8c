/**
 * The revocation signal made durable. A revoked grant is first recorded in the store (`kv`
 * namespace `revoked-grant`, kept until every token of the grant has expired), then handed to
 * the channel (Redis) in the background: the revocation request never waits on the channel, a
 * delivery that fails is retried with back-off, and every record is written to the channel again
 * when it reconnects and every `republishIntervalMs`, so a channel that lost its data (a restart
 * without persistence, a failover, a flush) is refilled from the store.
 */
import { isGrantId } from '@mcp-auth-kit/protocol';
import type { KeyValueStore } from './storage/types.js';
import { DEFAULTS } from './config/defaults.js';

/** kv namespace of the revocation records (key: grant id; value: {@link RevocationRecord}). */
export const REVOCATION_RECORD_NAMESPACE = 'revoked-grant';

export const DEFAULT_REPUBLISH_INTERVAL_MS = DEFAULTS.revocationOutbox.republishIntervalMs;
/** One delivery attempt that takes longer counts as failed (the command may still land). */
export const DEFAULT_DELIVERY_TIMEOUT_MS = DEFAULTS.revocationOutbox.deliveryTimeoutMs;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 30_000;
/**
 * Deliveries waiting in memory at most; past it the oldest waits for the next republish, which
 * reads every record from the store (nothing is lost, it only comes later).
 */
const MAX_PENDING = 10_000;
/** Records refilled concurrently. */
const REFILL_BATCH = 64;

/** What the store keeps per revoked grant. */
export interface RevocationRecord {
  /** Epoch second after which every token of the grant has expired (clock tolerance included). */
  until: number;
}

/** The channel to the resource servers (`createRedisRevocationSignal` gives Redis's). */
export interface RevocationChannel {
  /** Makes the grant known until `until` (epoch s) and tells the running resource servers at once. */
  announce(grantId: string, until: number): Promise<void>;
  /** Makes the grant known until `until` again, without telling anyone (refilling the channel). */
  refill(grantId: string, until: number): Promise<void>;
}

export interface RevocationOutboxOptions {
  channel: RevocationChannel;
  /** How long a grant stays revoked after its revocation: the longest access-token lifetime plus clock tolerance. */
  retentionSeconds: number;
  /** Every record is refilled this often (default 30 000 ms; 0 turns it off). */
  republishIntervalMs?: number;
  /** Bound on one delivery attempt (default 2 000 ms). */
  deliveryTimeoutMs?: number;
  /** Epoch-millisecond clock. Default `Date.now`. */
  clock?: () => number;
  /** Background failures: a delivery or refill that failed (retried), a record the store could not write. */
  onError?: (error: unknown) => void;
}

export interface RevocationOutbox {
  /**
   * For `openStore(…, { onGrantRevoked })`: records the grant (awaited: one store write) and
   * queues its delivery (not awaited). Never rejects.
   */
  revoked(grantId: string): Promise<void>;
  /** The store whose kv keeps the records; starts the periodic refill (records made by other instances or the admin tool included). */
  useStore(kv: KeyValueStore): void;
  /** Refills every record now, then retries what is queued (call it when the channel reconnects). */
  republish(): Promise<number>;
  /** Deliveries not yet done. */
  readonly pending: number;
  /** Resolves `true` once nothing is queued, `false` after `timeoutMs` (for a process about to exit). */
  settled(timeoutMs: number): Promise<boolean>;
  /** Stops the timers (queued deliveries stay in the store's records). */
  close(): void;
}

class DeliveryTimeout extends Error {
  constructor(ms: number) {
    super(`revocation delivery did not finish within ${ms} ms`);
  }
}

function bounded<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeliveryTimeout(ms)), ms);
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export function createRevocationOutbox(options: RevocationOutboxOptions): RevocationOutbox {
  const clock = options.clock ?? Date.now;
  const timeoutMs = options.deliveryTimeoutMs ?? DEFAULTS.revocationOutbox.deliveryTimeoutMs;
  const retentionSeconds = Math.ceil(options.retentionSeconds);
  const onError = (error: unknown) => options.onError?.(error);
  // grant id → until (epoch s), in revocation order
  const queue = new Map<string, number>();
  const waiters = new Set<(done: boolean) => void>();
  let kv: KeyValueStore | undefined;
  let draining = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = RETRY_MIN_MS;
  let republishTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const wakeWaiters = () => {
    if (queue.size > 0 && !closed) return;
    for (const wake of waiters) wake(queue.size === 0);
    waiters.clear();
  };

  const scheduleRetry = () => {
    if (closed || retryTimer !== undefined) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void drain();
    }, retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };

  const drain = async (): Promise<void> => {
    if (draining || closed) return;
    draining = true;
    try {
      for (const [grantId, until] of queue) {
        try {
          await bounded(options.channel.announce(grantId, until), timeoutMs);
        } catch (error) {
          onError(error);
          scheduleRetry();
          return;
        }
        // a newer revocation of the same grant may have replaced the entry meanwhile
        if (queue.get(grantId) === until) queue.delete(grantId);
        retryMs = RETRY_MIN_MS;
      }
    } finally {
      draining = false;
      wakeWaiters();
    }
    if (queue.size > 0) void drain();
  };

  const republish = async (): Promise<number> => {
    if (kv === undefined || closed) return 0;
    const now = Math.floor(clock() / 1000);
    const live = (await kv.list<RevocationRecord>(REVOCATION_RECORD_NAMESPACE)).flatMap(({ key, value }) => {
      const until = typeof value?.until === 'number' ? value.until : undefined;
      return isGrantId(key) && until !== undefined && until > now ? [{ grantId: key, until }] : [];
    });
    // a few writes in flight at once (node-redis pipelines them), not one round trip per record
    for (let i = 0; i < live.length; i += REFILL_BATCH) {
      await Promise.all(
        live.slice(i, i + REFILL_BATCH).map(({ grantId, until }) => bounded(options.channel.refill(grantId, until), timeoutMs)),
      );
    }
    void drain();
    return live.length;
  };

  return {
    async revoked(grantId) {
      if (!isGrantId(grantId) || closed) return;
      const until = Math.ceil(clock() / 1000) + retentionSeconds;
      try {
        await kv?.set(REVOCATION_RECORD_NAMESPACE, grantId, { until } satisfies RevocationRecord, retentionSeconds);
      } catch (error) {
        // the grant is gone from the store all the same; the delivery below still runs
        onError(error);
      }
      queue.delete(grantId);
      queue.set(grantId, until);
      if (queue.size > MAX_PENDING) queue.delete(queue.keys().next().value as string);
      void drain();
    },
    useStore(store) {
      kv = store;
      const interval = options.republishIntervalMs ?? DEFAULTS.revocationOutbox.republishIntervalMs;
      if (republishTimer !== undefined || interval <= 0) return;
      republishTimer = setInterval(() => {
        republish().catch(onError);
      }, interval);
      // never keeps a process alive on its own
      republishTimer.unref();
    },
    republish,
    get pending() {
      return queue.size;
    },
    settled(ms) {
      if (queue.size === 0 && !draining) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const wake = (done: boolean) => {
          clearTimeout(timer);
          resolve(done);
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          resolve(false);
        }, ms);
        timer.unref();
        waiters.add(wake);
      });
    },
    close() {
      closed = true;
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      if (republishTimer !== undefined) clearInterval(republishTimer);
      retryTimer = undefined;
      republishTimer = undefined;
      wakeWaiters();
    },
  };
}
