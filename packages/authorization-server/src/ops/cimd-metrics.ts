/**
 * Counts Client ID Metadata Document look-ups without changing how they are made: the shared
 * cache read tells a hit, a cache write after a fetch tells a miss, anything else a failure.
 * It wraps the CIMD fetcher only (provider.ts), so a `jwks_uri` request is never counted.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { KeyValueStore } from '../storage/types.js';
import { CIMD_CACHE_NAMESPACE, type FetchLike } from '../clients/cimd.js';
import type { AsMetrics } from './metrics.js';

export function meteredCimdFetch(make: (kv: KeyValueStore) => FetchLike, kv: KeyValueStore, metrics: AsMetrics): FetchLike {
  const current = new AsyncLocalStorage<{ outcome?: 'hit' | 'miss' }>();
  const observed: KeyValueStore = {
    async get<T>(namespace: string, key: string): Promise<T | undefined> {
      const value = await kv.get<T>(namespace, key);
      const expiresAt = (value as { expiresAt?: number } | undefined)?.expiresAt;
      if (namespace === CIMD_CACHE_NAMESPACE && typeof expiresAt === 'number' && expiresAt > Date.now()) {
        const state = current.getStore();
        if (state) state.outcome = 'hit';
      }
      return value;
    },
    async set(namespace, key, value, ttlSeconds) {
      await kv.set(namespace, key, value, ttlSeconds);
      const state = current.getStore();
      if (namespace === CIMD_CACHE_NAMESPACE && state) state.outcome = 'miss';
    },
    increment: (namespace, key, by, ttlSeconds) => kv.increment(namespace, key, by, ttlSeconds),
    decrement: (namespace, key, by) => kv.decrement(namespace, key, by),
    delete: (namespace, key) => kv.delete(namespace, key),
    list: (namespace) => kv.list(namespace),
  };
  const inner = make(observed);
  return async (url, options) => {
    const state: { outcome?: 'hit' | 'miss' } = {};
    try {
      const response = await current.run(state, () => inner(url, options));
      if (state.outcome) metrics.cimdFetch(state.outcome);
      else if (response.status !== 200) metrics.cimdFetch('fail');
      return response;
    } catch (err) {
      metrics.cimdFetch('fail');
      throw err;
    }
  };
}
