/** Signing and cookie keys in memory. */
import { epochSeconds } from '../clock.js';
import { isLive, type CookieKeyRecord, type KeyBackend } from '../keys.js';
import type { StoredSigningKey } from '../types.js';
import { copy } from './copy.js';

export class MemoryKeys implements KeyBackend {
  signing: StoredSigningKey[] = [];
  cookie: CookieKeyRecord[] = [];

  async readSigningKeys() {
    return copy(this.signing);
  }
  async mutateSigningKeys(change: (rows: StoredSigningKey[]) => StoredSigningKey[] | undefined) {
    return this.mutate('signing', change);
  }
  async readCookieKeys() {
    return copy(this.cookie);
  }
  async mutateCookieKeys(change: (rows: CookieKeyRecord[]) => CookieKeyRecord[] | undefined) {
    return this.mutate('cookie', change);
  }

  private mutate<K extends 'signing' | 'cookie'>(kind: K, change: (rows: this[K]) => this[K] | undefined): this[K] {
    const next = change(copy(this[kind]));
    if (next) this[kind] = copy(next);
    return copy(this[kind]);
  }

  /** Drops retired keys past `retireAfter`; returns how many. */
  cleanup(now: number): number {
    const before = this.signing.length;
    this.signing = this.signing.filter((k) => isLive(k, epochSeconds(now)));
    return before - this.signing.length;
  }
}
