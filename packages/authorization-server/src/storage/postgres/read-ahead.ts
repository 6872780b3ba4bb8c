import type { AccountRow } from '../accounts.js';

/** How long (real time) a grant read alongside its code or refresh token answers the next `Grant.find`. */
const PREFETCH_MS = 200;
const PREFETCH_MAX = 1000;

/** Reads of one row kept at once: concurrent token requests of one user read the same grant and account. */
const PREFETCH_PER_ROW = 32;

/**
 * Rows read ahead by a token request for its own next lookup: each read used at most once, for
 * at most {@link PREFETCH_MS}, and dropped by any write of this instance to that row, so the
 * lookup that follows in the same request sees what the request read a moment before, never an
 * older state of this instance's own writes. Concurrent requests that read the same row (one
 * user's grant and account) each leave their read; a lookup takes the newest one, which is at
 * least as fresh as its own.
 */
export class ReadAhead<T> {
  readonly #entries = new Map<string, { value: T; until: number }[]>();

  put(id: string, value: T): void {
    let reads = this.#entries.get(id);
    if (reads === undefined) {
      if (this.#entries.size >= PREFETCH_MAX) this.#entries.delete(this.#entries.keys().next().value as string);
      reads = [];
      this.#entries.set(id, reads);
    }
    if (reads.length >= PREFETCH_PER_ROW) reads.shift();
    reads.push({ value, until: performance.now() + PREFETCH_MS });
  }

  take(id: string): T | undefined {
    const reads = this.#entries.get(id);
    const newest = reads?.pop();
    if (newest === undefined) return undefined;
    // every other read of the row is older: once the newest has expired, they all have
    if (reads!.length === 0 || performance.now() > newest.until) this.#entries.delete(id);
    return performance.now() > newest.until ? undefined : newest.value;
  }

  drop(id: string): void {
    this.#entries.delete(id);
  }

  clear(): void {
    this.#entries.clear();
  }
}

export interface PrefetchedGrant {
  payload: string;
  expiresAt: number | null;
}

export interface PrefetchedAccount {
  row: AccountRow;
  identities: string[];
}
