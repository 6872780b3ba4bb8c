/** Signing and cookie keys; every change runs in an IMMEDIATE transaction, so processes end with the same keys. */
import { signingFromRow, type CookieKeyRecord, type KeyBackend, type SigningRow } from '../keys.js';
import type { StoredSigningKey } from '../types.js';
import { type Db, prepared } from './statements.js';

export class SqliteKeys implements KeyBackend {
  constructor(private readonly db: Db) {}

  private signing(): StoredSigningKey[] {
    return (
      prepared(this.db, 'SELECT jwk, status, created_at, retire_after FROM signing_keys ORDER BY created_at, kid').all() as SigningRow[]
    ).map(signingFromRow);
  }

  private cookie(): CookieKeyRecord[] {
    return (
      prepared(this.db, 'SELECT key, created_at FROM cookie_keys ORDER BY position').all() as { key: string; created_at: number }[]
    ).map((r) => ({
      key: r.key,
      createdAt: Number(r.created_at),
    }));
  }

  async readSigningKeys() {
    return this.signing();
  }

  async mutateSigningKeys(change: (rows: StoredSigningKey[]) => StoredSigningKey[] | undefined) {
    return this.db.transaction(() => {
      const next = change(this.signing());
      if (next) {
        prepared(this.db, 'DELETE FROM signing_keys').run();
        const insert = prepared(this.db, 'INSERT INTO signing_keys (kid, jwk, status, created_at, retire_after) VALUES (?, ?, ?, ?, ?)');
        for (const k of next) insert.run(k.jwk.kid, JSON.stringify(k.jwk), k.status, k.createdAt, k.retireAfter ?? null);
      }
      return this.signing();
    }, 'immediate');
  }

  async readCookieKeys() {
    return this.cookie();
  }

  async mutateCookieKeys(change: (rows: CookieKeyRecord[]) => CookieKeyRecord[] | undefined) {
    return this.db.transaction(() => {
      const next = change(this.cookie());
      if (next) {
        prepared(this.db, 'DELETE FROM cookie_keys').run();
        const insert = prepared(this.db, 'INSERT INTO cookie_keys (position, key, created_at) VALUES (?, ?, ?)');
        for (const [i, k] of next.entries()) insert.run(i, k.key, k.createdAt);
      }
      return this.cookie();
    }, 'immediate');
  }
}
