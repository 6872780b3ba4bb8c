import { createHash } from 'node:crypto';
import type { DpopReplayStore } from './types.js';

export type { DpopReplayStore };

/** Replay key of a proof: hash of the key thumbprint and `jti`, so entries have a bounded size. */
export function replayKey(jkt: string, jti: string): string {
  return createHash('sha256').update(`${jkt}\u0000${jti}`).digest('base64url');
}

/**
 * In-memory {@link DpopReplayStore}: entries expire at their `expiresAt`; at `maxEntries` the
 * oldest entry is dropped. Proofs are only recorded once the access token they carry has been
 * verified and is bound to the proof's key, so filling the cache takes valid credentials.
 */
export class MemoryDpopReplayStore implements DpopReplayStore {
  readonly #entries = new Map<string, number>();
  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  add(key: string, expiresAt: number): boolean {
    const now = this.now();
    const existing = this.#entries.get(key);
    if (existing !== undefined && existing > now) return false;
    this.#entries.delete(key);
    this.#sweep(now);
    this.#entries.set(key, expiresAt);
    while (this.#entries.size > this.maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return true;
  }

  /** Drops expired entries from the front (insertion order is close to expiry order). */
  #sweep(now: number): void {
    for (const [key, until] of this.#entries) {
      if (until > now) break;
      this.#entries.delete(key);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}
