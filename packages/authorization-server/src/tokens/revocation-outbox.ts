/**
 * The revocation signal made durable. A revoked grant is first recorded in the store (`kv`
 * namespace `revoked-grant`, kept until every token of the grant has expired), then handed to
 * the channel (Redis) in the background: the revocation request never waits on the channel, a
 * delivery that fails is retried with back-off, and every record is written to the channel again
 * when it reconnects and every `republishIntervalMs`, so a channel that lost its data (a restart
 * without persistence, a failover, a flush) is refilled from the store.
 */
import { isGrantId } from '@mcp-auth-kit/protocol';
import type { KeyValueStore } from '../storage/types.js';
import { DEFAULTS } from '../config/defaults.js';

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

/**
 * The deliveries not yet done, in revocation order (grant id → until, epoch s): drained one at a
 * time, a failure retried with back-off, the newest revocation of a grant replacing an older one.
 */
class DeliveryQueue {
  private readonly queue = new Map<string, number>();
  private readonly waiters = new Set<(done: boolean) => void>();
  private draining = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_MIN_MS;
  closed = false;

  constructor(
    private readonly deliver: (grantId: string, until: number) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  get size(): number {
    return this.queue.size;
  }

  add(grantId: string, until: number): void {
    this.queue.delete(grantId);
    this.queue.set(grantId, until);
    if (this.queue.size > MAX_PENDING) this.queue.delete(this.queue.keys().next().value as string);
    void this.drain();
  }

  async drain(): Promise<void> {
    if (this.draining || this.closed) return;
    this.draining = true;
    try {
      for (const [grantId, until] of this.queue) {
        try {
          await this.deliver(grantId, until);
        } catch (error) {
          this.onError(error);
          this.scheduleRetry();
          return;
        }
        // a newer revocation of the same grant may have replaced the entry meanwhile
        if (this.queue.get(grantId) === until) this.queue.delete(grantId);
        this.retryMs = RETRY_MIN_MS;
      }
    } finally {
      this.draining = false;
      this.wakeWaiters();
    }
    if (this.queue.size > 0) void this.drain();
  }

  settled(ms: number): Promise<boolean> {
    if (this.queue.size === 0 && !this.draining) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const wake = (done: boolean) => {
        clearTimeout(timer);
        resolve(done);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        resolve(false);
      }, ms);
      timer.unref();
      this.waiters.add(wake);
    });
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    if (this.queue.size > 0 && !this.closed) return;
    for (const wake of this.waiters) wake(this.queue.size === 0);
    this.waiters.clear();
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.drain();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }
}

export function createRevocationOutbox(options: RevocationOutboxOptions): RevocationOutbox {
  const clock = options.clock ?? Date.now;
  const timeoutMs = options.deliveryTimeoutMs ?? DEFAULTS.revocationOutbox.deliveryTimeoutMs;
  const retentionSeconds = Math.ceil(options.retentionSeconds);
  const onError = (error: unknown) => options.onError?.(error);
  const deliveries = new DeliveryQueue((grantId, until) => bounded(options.channel.announce(grantId, until), timeoutMs), onError);
  let kv: KeyValueStore | undefined;
  let republishTimer: NodeJS.Timeout | undefined;

  const republish = async (): Promise<number> => {
    if (kv === undefined || deliveries.closed) return 0;
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
    void deliveries.drain();
    return live.length;
  };

  return {
    async revoked(grantId) {
      if (!isGrantId(grantId) || deliveries.closed) return;
      const until = Math.ceil(clock() / 1000) + retentionSeconds;
      try {
        await kv?.set(REVOCATION_RECORD_NAMESPACE, grantId, { until } satisfies RevocationRecord, retentionSeconds);
      } catch (error) {
        // the grant is gone from the store all the same; the delivery below still runs
        onError(error);
      }
      deliveries.add(grantId, until);
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
      return deliveries.size;
    },
    settled: (ms) => deliveries.settled(ms),
    close() {
      if (republishTimer !== undefined) clearInterval(republishTimer);
      republishTimer = undefined;
      deliveries.close();
    },
  };
}
