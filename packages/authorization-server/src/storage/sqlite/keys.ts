/** Signing and cookie keys; every change runs in an IMMEDIATE transaction, so processes end with the same keys. */
import { signingFromRow, type CookieKeyRecord, type KeyBackend, type SigningRow } from '../keys.js';
import type { StoredSigningKey } from '../types.js';
import { type Db, prepared } from './statements.js';

/** One key table: how its rows are read back and written. */
interface KeyTable<T> {
  name: string;
  read: () => T[];
  insert: string;
  params: (row: T, position: number) => unknown[];
}

export class SqliteKeys implements KeyBackend {
  constructor(private readonly db: Db) {}

  private readonly signingTable: KeyTable<StoredSigningKey> = {
    name: 'signing_keys',
    read: () => this.signing(),
    insert: 'INSERT INTO signing_keys (kid, jwk, status, created_at, retire_after) VALUES (?, ?, ?, ?, ?)',
    params: (k) => [k.jwk.kid, JSON.stringify(k.jwk), k.status, k.createdAt, k.retireAfter ?? null],
  };

  private readonly cookieTable: KeyTable<CookieKeyRecord> = {
    name: 'cookie_keys',
    read: () => this.cookie(),
    insert: 'INSERT INTO cookie_keys (position, key, created_at) VALUES (?, ?, ?)',
    params: (k, i) => [i, k.key, k.createdAt],
  };

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
    return this.mutate(this.signingTable, change);
  }

  async readCookieKeys() {
    return this.cookie();
  }

  async mutateCookieKeys(change: (rows: CookieKeyRecord[]) => CookieKeyRecord[] | undefined) {
    return this.mutate(this.cookieTable, change);
  }

  /** One change of a key table: read, let `change` decide, replace every row when it returns a new list, read back. */
  private mutate<T>(table: KeyTable<T>, change: (rows: T[]) => T[] | undefined): T[] {
    return this.db.transaction(() => {
      const next = change(table.read());
      if (next) {
        prepared(this.db, `DELETE FROM ${table.name}`).run();
        const statement = prepared(this.db, table.insert);
        for (const [i, row] of next.entries()) statement.run(...table.params(row, i));
      }
      return table.read();
    }, 'immediate');
  }
}
