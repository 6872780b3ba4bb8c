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
    return inTransaction(this.pool, `${this.lock}:signing`, async (client) => {
      const next = change(await this.signing(client));
      if (next) {
        await client.query(`DELETE FROM ${this.q}.signing_keys`);
        for (const k of next) {
          await client.query(
            `INSERT INTO ${this.q}.signing_keys (kid, jwk, status, created_at, retire_after) VALUES ($1, $2, $3, $4, $5)`,
            [k.jwk.kid, JSON.stringify(k.jwk), k.status, k.createdAt, k.retireAfter ?? null],
          );
        }
      }
      return this.signing(client);
    });
  }

  readCookieKeys() {
    return this.cookie(this.pool);
  }

  mutateCookieKeys(change: (rows: CookieKeyRecord[]) => CookieKeyRecord[] | undefined) {
    return inTransaction(this.pool, `${this.lock}:cookie`, async (client) => {
      const next = change(await this.cookie(client));
      if (next) {
        await client.query(`DELETE FROM ${this.q}.cookie_keys`);
        for (const [i, k] of next.entries()) {
          await client.query(`INSERT INTO ${this.q}.cookie_keys (position, key, created_at) VALUES ($1, $2, $3)`, [i, k.key, k.createdAt]);
        }
      }
      return this.cookie(client);
    });
  }
}
