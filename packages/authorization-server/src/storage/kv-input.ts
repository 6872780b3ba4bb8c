/** Input checks shared by every KeyValueStore, so a bad TTL fails the same way everywhere. */
import { StorageError } from './errors.js';
import type { KeyValueStore } from './types.js';

function invalid(message: string): StorageError {
  return new StorageError(message, 'invalid_input');
}

function checkKey(namespace: unknown, key: unknown): void {
  if (typeof namespace !== 'string' || namespace === '') throw invalid('kv namespace must be a non-empty string');
  if (typeof key !== 'string') throw invalid('kv key must be a string');
}

function checkTtl(ttlSeconds: unknown): void {
  if (typeof ttlSeconds !== 'number' || !Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw invalid('kv ttlSeconds must be a positive number');
  }
}

export function validatingKv(kv: KeyValueStore): KeyValueStore {
  return {
    async get<T = unknown>(namespace: string, key: string) {
      checkKey(namespace, key);
      return kv.get<T>(namespace, key);
    },
    async set(namespace, key, value, ttlSeconds) {
      checkKey(namespace, key);
      checkTtl(ttlSeconds);
      if (value === undefined) throw invalid('kv value must not be undefined (use delete)');
      return kv.set(namespace, key, value, ttlSeconds);
    },
    async increment(namespace, key, by, ttlSeconds) {
      checkKey(namespace, key);
      checkTtl(ttlSeconds);
      if (typeof by !== 'number' || !Number.isFinite(by)) throw invalid('kv increment must be a finite number');
      return kv.increment(namespace, key, by, ttlSeconds);
    },
    async decrement(namespace, key, by) {
      checkKey(namespace, key);
      if (typeof by !== 'number' || !Number.isFinite(by) || by < 0) throw invalid('kv decrement must be a finite number, not negative');
      return kv.decrement(namespace, key, by);
    },
    async delete(namespace, key) {
      checkKey(namespace, key);
      return kv.delete(namespace, key);
    },
    async list<T = unknown>(namespace: string) {
      checkKey(namespace, '');
      return kv.list<T>(namespace);
    },
  };
}
