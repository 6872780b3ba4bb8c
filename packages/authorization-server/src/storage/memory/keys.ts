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
    const next = change(copy(this.signing));
    if (next) this.signing = copy(next);
    return copy(this.signing);
  }
  async readCookieKeys() {
    return copy(this.cookie);
  }
  async mutateCookieKeys(change: (rows: CookieKeyRecord[]) => CookieKeyRecord[] | undefined) {
    const next = change(copy(this.cookie));
    if (next) this.cookie = copy(next);
    return copy(this.cookie);
  }

  /** Drops retired keys past `retireAfter`; returns how many. */
  cleanup(now: number): number {
    const before = this.signing.length;
    this.signing = this.signing.filter((k) => isLive(k, epochSeconds(now)));
    return before - this.signing.length;
  }
}
