/** Third-party connections (`third_party_connections`), one row per (account, provider). */
import type { Pool } from 'pg';
import { CONNECTION_COLUMNS, type ConnectionRow, connectionFromRow, connectionValues, nextConnection } from '../connections.js';
import { type Clock, epochSeconds } from '../clock.js';
import type { ConnectionInput, ConnectionRecord, ConnectionStore } from '../types.js';
import { inTransaction, prepared, repeatable } from './statements.js';

export class PgConnections implements ConnectionStore {
  constructor(
    private readonly pool: Pool,
    private readonly q: string,
    private readonly clock: Clock,
  ) {}

  /** Read (row-locked) and write in one transaction: `version` decides whether the write happens. */
  private write(input: ConnectionInput, version: number | undefined): Promise<ConnectionRecord | undefined> {
    const table = `${this.q}.third_party_connections`;
    // A first write for the pair locks nothing to wait on: the advisory lock serialises those.
    return inTransaction(this.pool, `mcp-auth-kit:connection:${input.accountId} ${input.provider}`, async (client) => {
      const { rows } = await client.query<ConnectionRow>(
        `SELECT ${CONNECTION_COLUMNS} FROM ${table} WHERE account_id = $1 AND provider = $2 FOR UPDATE`,
        [input.accountId, input.provider],
      );
      const record = nextConnection(input, rows[0] && connectionFromRow(rows[0]), version, epochSeconds(this.clock()));
      if (!record) return undefined;
      await client.query(
        `INSERT INTO ${table} (${CONNECTION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (account_id, provider) DO UPDATE SET key_id = $3, sealed = $4, scopes = $5, provider_subject = $6,
           expires_at = $7, created_at = $8, updated_at = $9, version = $10`,
        connectionValues(record),
      );
      return record;
    });
  }

  async put(input: ConnectionInput) {
    return (await this.write(input, undefined))!;
  }

  replace(input: ConnectionInput, version: number) {
    return this.write(input, version);
  }

  async get(accountId: string, provider: string) {
    const { rows } = await repeatable<ConnectionRow>(
      this.pool,
      prepared(`SELECT ${CONNECTION_COLUMNS} FROM ${this.q}.third_party_connections WHERE account_id = $1 AND provider = $2`, [
        accountId,
        provider,
      ]),
    );
    return rows[0] ? connectionFromRow(rows[0]) : undefined;
  }

  async list(accountId: string) {
    const { rows } = await repeatable<ConnectionRow>(
      this.pool,
      prepared(`SELECT ${CONNECTION_COLUMNS} FROM ${this.q}.third_party_connections WHERE account_id = $1 ORDER BY provider COLLATE "C"`, [
        accountId,
      ]),
    );
    return rows.map(connectionFromRow);
  }

  async delete(accountId: string, provider: string) {
    const result = await repeatable(this.pool, `DELETE FROM ${this.q}.third_party_connections WHERE account_id = $1 AND provider = $2`, [
      accountId,
      provider,
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  async deleteAccount(accountId: string) {
    const result = await repeatable(this.pool, `DELETE FROM ${this.q}.third_party_connections WHERE account_id = $1`, [accountId]);
    return result.rowCount ?? 0;
  }
}
