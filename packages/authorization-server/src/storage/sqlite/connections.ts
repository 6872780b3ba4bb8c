/** Third-party connections (`third_party_connections`), one row per (account, provider). */
import { CONNECTION_COLUMNS, type ConnectionRow, connectionFromRow, connectionValues, nextConnection } from '../connections.js';
import { type Clock, epochSeconds } from '../clock.js';
import type { ConnectionInput, ConnectionRecord, ConnectionStore } from '../types.js';
import { type Db, prepared } from './statements.js';

const SELECT = `SELECT ${CONNECTION_COLUMNS} FROM third_party_connections`;

export class SqliteConnections implements ConnectionStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  private row(accountId: string, provider: string): ConnectionRow | undefined {
    return prepared(this.db, `${SELECT} WHERE account_id = ? AND provider = ?`).get(accountId, provider) as ConnectionRow | undefined;
  }

  /** Read and write in one IMMEDIATE transaction: `version` decides whether the write happens. */
  private write(input: ConnectionInput, version: number | undefined): ConnectionRecord | undefined {
    return this.db.transaction(() => {
      const existing = this.row(input.accountId, input.provider);
      const record = nextConnection(input, existing && connectionFromRow(existing), version, epochSeconds(this.clock()));
      if (!record) return undefined;
      prepared(this.db, `INSERT OR REPLACE INTO third_party_connections (${CONNECTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
        ...(connectionValues(record) as Array<string | number | null>),
      );
      return record;
    }, 'immediate');
  }

  async put(input: ConnectionInput) {
    return this.write(input, undefined)!;
  }

  async replace(input: ConnectionInput, version: number) {
    return this.write(input, version);
  }

  async get(accountId: string, provider: string) {
    const row = this.row(accountId, provider);
    return row ? connectionFromRow(row) : undefined;
  }

  async list(accountId: string) {
    const rows = prepared(this.db, `${SELECT} WHERE account_id = ? ORDER BY provider`).all(accountId) as ConnectionRow[];
    return rows.map(connectionFromRow);
  }

  async delete(accountId: string, provider: string) {
    return (
      Number(
        prepared(this.db, 'DELETE FROM third_party_connections WHERE account_id = ? AND provider = ?').run(accountId, provider).changes,
      ) > 0
    );
  }

  async deleteAccount(accountId: string) {
    return Number(prepared(this.db, 'DELETE FROM third_party_connections WHERE account_id = ?').run(accountId).changes);
  }
}
