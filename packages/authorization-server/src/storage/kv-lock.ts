/**
 * A lock across instances in the shared store: an atomic counter in `store.kv` (only the first
 * increment gets 1; a live counter keeps its expiry, so a holder that died frees it after `ttl`).
 * For short work that must run alone per key: one grant per (account, client), one refresh per
 * third-party connection.
 */
import type { KeyValueStore } from './types.js';

export interface KvLockOptions {
  /** Seconds a dead holder keeps the key locked (the work takes milliseconds). */
  ttlSeconds: number;
  /** How long to wait for the key before giving up. */
  waitMs: number;
  /** The error thrown when the wait ends. */
  busy: () => Error;
}

export async function withKvLock<T>(
  kv: KeyValueStore,
  namespace: string,
  key: string,
  options: KvLockOptions,
  fn: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + options.waitMs;
  while ((await kv.increment(namespace, key, 1, options.ttlSeconds)) !== 1) {
    if (Date.now() > deadline) throw options.busy();
    await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 20));
  }
  try {
    return await fn();
  } finally {
    await kv.delete(namespace, key);
  }
}
