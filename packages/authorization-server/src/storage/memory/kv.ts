/** The key-value store in memory: entries keep their JSON text and expiry (epoch ms). */
import type { Clock } from '../clock.js';
import type { KeyValueEntry, KeyValueStore } from '../types.js';
import { pairKey } from './copy.js';

export class MemoryKv implements KeyValueStore {
  readonly entries = new Map<string, { value: string; expiresAt: number }>();
  constructor(private readonly clock: Clock) {}

  private live(namespace: string, key: string) {
    const e = this.entries.get(pairKey(namespace, key));
    return e && e.expiresAt > this.clock() ? e : undefined;
  }

  async get<T = unknown>(namespace: string, key: string): Promise<T | undefined> {
    const e = this.live(namespace, key);
    return e ? (JSON.parse(e.value) as T) : undefined;
  }

  async set(namespace: string, key: string, value: unknown, ttlSeconds: number): Promise<void> {
    this.entries.set(pairKey(namespace, key), { value: JSON.stringify(value ?? null), expiresAt: this.clock() + ttlSeconds * 1000 });
  }

  async increment(namespace: string, key: string, by: number, ttlSeconds: number): Promise<number> {
    const e = this.live(namespace, key);
    const previous = e ? (JSON.parse(e.value) as unknown) : undefined;
    if (e && typeof previous === 'number') {
      e.value = JSON.stringify(previous + by);
      return previous + by;
    }
    this.entries.set(pairKey(namespace, key), { value: JSON.stringify(by), expiresAt: this.clock() + ttlSeconds * 1000 });
    return by;
  }

  async decrement(namespace: string, key: string, by: number): Promise<number | undefined> {
    const e = this.live(namespace, key);
    const previous = e ? (JSON.parse(e.value) as unknown) : undefined;
    if (!e || typeof previous !== 'number') return undefined;
    const next = Math.max(0, previous - by);
    e.value = JSON.stringify(next);
    return next;
  }

  async delete(namespace: string, key: string): Promise<void> {
    this.entries.delete(pairKey(namespace, key));
  }

  async list<T = unknown>(namespace: string): Promise<KeyValueEntry<T>[]> {
    const start = pairKey(namespace, '');
    const now = this.clock();
    const out: KeyValueEntry<T>[] = [];
    for (const [k, e] of this.entries) {
      if (k.startsWith(start) && e.expiresAt > now)
        out.push({ key: k.slice(start.length), value: JSON.parse(e.value) as T, expiresAt: e.expiresAt });
    }
    return out;
  }

  cleanup(now: number): number {
    let n = 0;
    for (const [k, e] of this.entries) {
      if (e.expiresAt <= now) {
        this.entries.delete(k);
        n++;
      }
    }
    return n;
  }
}
