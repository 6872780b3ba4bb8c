import { hash } from 'node:crypto';
import { ConnectionMemo } from './connection-memo.js';
import type { VerifiedAccessToken } from './types.js';

/** SHA-256 of the token, so the cache never holds a usable credential as a key. */
export function tokenHash(token: string): string {
  // one-shot hash (Node ≥ 20.12): no Hash object per request
  return hash('sha256', token, 'base64url');
}

/**
 * The last token's {@link tokenHash} per connection (a {@link ConnectionMemo}): hashing the token
 * is most of a cache hit's own work. It never decides whether a token is valid (the cache entry
 * does). The comparison with the connection's previous token can at most tell, by its duration,
 * how long a prefix two tokens sent on one connection share: nanoseconds, not measurable from
 * outside the process, and no hint about a token in the cache.
 */
export class ConnectionTokenHashes {
  readonly #memo = new ConnectionMemo<string>();

  keyFor(token: string, connection: object | undefined): string {
    return this.#memo.get(connection, token, tokenHash);
  }
}

/**
 * Bounded LRU of validated tokens keyed by token hash (recency is tracked once the cache is half
 * full, see `get`). An entry is never returned at or past its expiry (`expiresAt` in seconds,
 * also capped by `ttlMs` for introspected tokens).
 */
export class TokenCache {
  readonly #entries = new Map<string, { value: VerifiedAccessToken; until: number }>();
  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /** `false` when the cache is turned off (`maxEntries` ≤ 0): callers can skip hashing. */
  get enabled(): boolean {
    return this.maxEntries > 0;
  }

  /** `key`: the token's {@link tokenHash} when the caller already has it (one hash per request). */
  get(token: string, key?: string): VerifiedAccessToken | undefined {
    if (this.maxEntries <= 0) return undefined;
    key ??= tokenHash(token);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() >= entry.until) {
      this.#entries.delete(key);
      return undefined;
    }
    // Recency matters only to eviction: below half full no entry is evicted soon, and moving an
    // entry to the end (a delete and a set) is most of a hit's Map work. Entries used after the
    // cache passed half full are moved, so a hot entry is never the oldest when eviction starts.
    if (this.#entries.size * 2 >= this.maxEntries) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry.value;
  }

  set(value: VerifiedAccessToken, ttlMs?: number, key?: string): void {
    if (this.maxEntries <= 0) return;
    let until = value.expiresAt * 1000;
    if (ttlMs !== undefined) until = Math.min(until, this.now() + ttlMs);
    if (!(until > this.now())) return;
    key ??= tokenHash(value.token);
    this.#entries.delete(key);
    this.#entries.set(key, { value, until });
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}
