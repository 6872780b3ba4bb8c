/** Local accounts and their upstream identities. */
import type { Pool, PoolClient } from 'pg';
import {
  type AccountRow,
  accountFromRow,
  conflict,
  newAccount,
  notFound,
  patchAccount,
  upstreamIdentityKey,
  usernameKey,
} from '../accounts.js';
import { type Clock, epochSeconds } from '../clock.js';
import type { AccountPatch, AccountRecord, AccountStore, NewAccount } from '../types.js';
import type { PrefetchedAccount, ReadAhead } from './read-ahead.js';
import { inTransaction, isUniqueViolation, onPoolOrTransaction, prepared, repeatable } from './statements.js';

export class PgAccounts implements AccountStore {
  constructor(
    private readonly pool: Pool,
    private readonly q: string,
    private readonly clock: Clock,
    /** Account rows read with a code or refresh token: the `findById` that follows uses it. */
    private readonly readAhead: ReadAhead<PrefetchedAccount>,
  ) {}

  private async load(client: Pool | PoolClient, rows: AccountRow[]): Promise<AccountRecord[]> {
    if (rows.length === 0) return [];
    const sql = `SELECT account_id, identity FROM ${this.q}.account_identities WHERE account_id = ANY($1) ORDER BY account_id, position`;
    const ids = await onPoolOrTransaction<{ account_id: string; identity: string }>(this.pool, client, sql, [rows.map((r) => r.id)]);
    return rows.map((r) =>
      accountFromRow(
        r,
        ids.rows.filter((i) => i.account_id === r.id).map((i) => i.identity),
      ),
    );
  }

  /**
   * One account and its upstream identities in one statement (one round trip): `findById`
   * runs on every token request (oidc-provider's `findAccount`).
   */
  private async first(where: string, params: unknown[], join = ''): Promise<AccountRecord | undefined> {
    const { rows } = await repeatable<AccountRow & { identities: string[] }>(
      this.pool,
      prepared(
        `SELECT a.id, a.username, a.password_hash, a.display_name, a.disabled, a.admin, a.source, a.created_at, a.updated_at,
           ARRAY(SELECT x.identity FROM ${this.q}.account_identities x WHERE x.account_id = a.id ORDER BY x.position) AS identities
         FROM ${this.q}.accounts a ${join} WHERE ${where} LIMIT 1`,
        params,
      ),
    );
    const row = rows[0];
    if (!row) return undefined;
    const { identities, ...account } = row;
    return accountFromRow(account, identities);
  }

  private async writeIdentities(client: PoolClient, record: AccountRecord): Promise<void> {
    for (const [i, identity] of (record.upstreamIdentities ?? []).entries()) {
      await client.query(`INSERT INTO ${this.q}.account_identities (identity, account_id, position) VALUES ($1, $2, $3)`, [
        identity,
        record.id,
        i,
      ]);
    }
  }

  private async write(fn: (client: PoolClient) => Promise<AccountRecord>): Promise<AccountRecord> {
    try {
      return await inTransaction(this.pool, undefined, fn);
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('account (id, username or upstream identity)', error);
      throw error;
    }
  }

  async create(account: NewAccount) {
    const record = newAccount(account, epochSeconds(this.clock()));
    return this.write(async (client) => {
      await client.query(
        `INSERT INTO ${this.q}.accounts (id, username, username_key, password_hash, display_name, disabled, source, created_at, updated_at, admin)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          record.id,
          record.username,
          usernameKey(record.username),
          record.passwordHash,
          record.displayName ?? null,
          record.disabled,
          record.source,
          record.createdAt,
          record.updatedAt,
          Boolean(record.admin),
        ],
      );
      await this.writeIdentities(client, record);
      return record;
    });
  }

  findById(id: string) {
    const ahead = this.readAhead.take(id);
    if (ahead !== undefined) return Promise.resolve(accountFromRow(ahead.row, [...ahead.identities]));
    return this.first('a.id = $1', [id]);
  }

  findByUsername(username: string) {
    return this.first('a.username_key = $1', [usernameKey(username)]);
  }

  findByUpstreamIdentity(issuer: string, subject: string) {
    return this.first(
      'i.identity = $1',
      [upstreamIdentityKey(issuer, subject)],
      `JOIN ${this.q}.account_identities i ON i.account_id = a.id`,
    );
  }

  async list() {
    const { rows } = await repeatable<AccountRow>(this.pool, `SELECT * FROM ${this.q}.accounts ORDER BY created_at, id COLLATE "C"`);
    return this.load(this.pool, rows);
  }

  async update(id: string, patch: AccountPatch) {
    this.readAhead.drop(id);
    try {
      return await this.updateRow(id, patch);
    } finally {
      // also after the write: a read-ahead that raced with it may hold the previous state
      this.readAhead.drop(id);
    }
  }

  private updateRow(id: string, patch: AccountPatch) {
    return this.write(async (client) => {
      const { rows } = await client.query<AccountRow>(`SELECT * FROM ${this.q}.accounts WHERE id = $1 FOR UPDATE`, [id]);
      const [existing] = await this.load(client, rows);
      if (!existing) throw notFound();
      const record = patchAccount(existing, patch, epochSeconds(this.clock()));
      await client.query(
        `UPDATE ${this.q}.accounts SET username = $2, username_key = $3, password_hash = $4, display_name = $5, disabled = $6, updated_at = $7, source = $8, admin = $9 WHERE id = $1`,
        [
          id,
          record.username,
          usernameKey(record.username),
          record.passwordHash,
          record.displayName ?? null,
          record.disabled,
          record.updatedAt,
          record.source,
          Boolean(record.admin),
        ],
      );
      await client.query(`DELETE FROM ${this.q}.account_identities WHERE account_id = $1`, [id]);
      await this.writeIdentities(client, record);
      return record;
    });
  }
}
