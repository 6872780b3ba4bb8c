/** Signing and cookie keys; every change runs under an advisory lock, so instances end with the same keys. */
import type { Pool, PoolClient } from 'pg';
import { signingFromRow, type CookieKeyRecord, type KeyBackend, type SigningRow } from '../keys.js';
import type { StoredSigningKey } from '../types.js';
import { inTransaction, onPoolOrTransaction } from './statements.js';

export class PgKeys implements KeyBackend {
  constructor(
    private readonly pool: Pool,
    private readonly q: string,
    private readonly lock: string,
  ) {}

  private async signing(client: Pool | PoolClient): Promise<StoredSigningKey[]> {
    const sql = `SELECT jwk, status, created_at, retire_after FROM ${this.q}.signing_keys ORDER BY created_at, kid`;
    const { rows } = await onPoolOrTransaction<SigningRow>(this.pool, client, sql);
    return rows.map(signingFromRow);
  }

  private async cookie(client: Pool | PoolClient): Promise<CookieKeyRecord[]> {
    const sql = `SELECT key, created_at FROM ${this.q}.cookie_keys ORDER BY position`;
    const { rows } = await onPoolOrTransaction<{ key: string; created_at: string }>(this.pool, client, sql);
    return rows.map((r) => ({ key: r.key, createdAt: Number(r.created_at) }));
  }

  readSigningKeys() {
    return this.signing(this.pool);
  }

  mutateSigningKeys(change: (rows: StoredSigningKey[]) => StoredSigningKey[] | undefined) {
    const insert = `INSERT INTO ${this.q}.signing_keys (kid, jwk, status, created_at, retire_after) VALUES ($1, $2, $3, $4, $5)`;
    return this.mutate(
      'signing',
      (c) => this.signing(c),
      change,
      insert,
      (k) => [k.jwk.kid, JSON.stringify(k.jwk), k.status, k.createdAt, k.retireAfter ?? null],
    );
  }

  readCookieKeys() {
    return this.cookie(this.pool);
  }

  mutateCookieKeys(change: (rows: CookieKeyRecord[]) => CookieKeyRecord[] | undefined) {
    const insert = `INSERT INTO ${this.q}.cookie_keys (position, key, created_at) VALUES ($1, $2, $3)`;
    return this.mutate(
      'cookie',
      (c) => this.cookie(c),
      change,
      insert,
      (k, i) => [i, k.key, k.createdAt],
    );
  }

  /**
   * One change of a key table under its advisory lock: read, let `change` decide, replace every
   * row (one `insert` per row) when it returns a new list, read back what the table now holds.
   */
  private mutate<T>(
    kind: 'signing' | 'cookie',
    read: (client: PoolClient) => Promise<T[]>,
    change: (rows: T[]) => T[] | undefined,
    insert: string,
    params: (row: T, position: number) => unknown[],
  ): Promise<T[]> {
    return inTransaction(this.pool, `${this.lock}:${kind}`, async (client) => {
      const next = change(await read(client));
      if (next) {
        await client.query(`DELETE FROM ${this.q}.${kind}_keys`);
        // One connection runs its queries in order: queued together, awaited together.
        await Promise.all(next.map((row, i) => client.query(insert, params(row, i))));
      }
      return read(client);
    });
  }
}
