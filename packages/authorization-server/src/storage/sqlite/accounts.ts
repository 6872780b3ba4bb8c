/** Local accounts and their upstream identities. */
import * as shared from '../accounts.js';
import { type Clock, epochSeconds } from '../clock.js';
import type { AccountPatch, AccountRecord, AccountStore, NewAccount } from '../types.js';
import { type Db, prepared } from './statements.js';

export class SqliteAccounts implements AccountStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  private load(row: shared.AccountRow | undefined): AccountRecord | undefined {
    if (!row) return undefined;
    const ids = prepared(this.db, 'SELECT identity FROM account_identities WHERE account_id = ? ORDER BY position').all(row.id) as {
      identity: string;
    }[];
    return shared.accountFromRow(
      row,
      ids.map((r) => r.identity),
    );
  }

  private write(record: AccountRecord, insert: boolean): void {
    const params = {
      id: record.id,
      username: record.username,
      usernameKey: shared.usernameKey(record.username),
      passwordHash: record.passwordHash,
      displayName: record.displayName ?? null,
      disabled: record.disabled ? 1 : 0,
      admin: record.admin ? 1 : 0,
      source: record.source,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    };
    // node:sqlite refuses a named parameter its statement does not use.
    const { createdAt: _createdAt, ...update } = params;
    try {
      this.db.transaction(() => {
        if (insert) {
          prepared(
            this.db,
            `INSERT INTO accounts (id, username, username_key, password_hash, display_name, disabled, admin, source, created_at, updated_at)
             VALUES (@id, @username, @usernameKey, @passwordHash, @displayName, @disabled, @admin, @source, @createdAt, @updatedAt)`,
          ).run(params);
        } else {
          prepared(
            this.db,
            `UPDATE accounts SET username = @username, username_key = @usernameKey, password_hash = @passwordHash,
             display_name = @displayName, disabled = @disabled, admin = @admin, source = @source, updated_at = @updatedAt WHERE id = @id`,
          ).run(update);
          prepared(this.db, 'DELETE FROM account_identities WHERE account_id = ?').run(record.id);
        }
        const add = prepared(this.db, 'INSERT INTO account_identities (identity, account_id, position) VALUES (?, ?, ?)');
        for (const [i, identity] of (record.upstreamIdentities ?? []).entries()) add.run(identity, record.id, i);
      }, 'immediate');
    } catch (error) {
      if (this.db.isUniqueViolation(error)) throw shared.conflict('account (id, username or upstream identity)', error);
      throw error;
    }
  }

  async create(account: NewAccount) {
    const record = shared.newAccount(account, epochSeconds(this.clock()));
    this.write(record, true);
    return record;
  }

  async findById(id: string) {
    return this.load(prepared(this.db, 'SELECT * FROM accounts WHERE id = ?').get(id) as shared.AccountRow | undefined);
  }

  async findByUsername(username: string) {
    return this.load(
      prepared(this.db, 'SELECT * FROM accounts WHERE username_key = ?').get(shared.usernameKey(username)) as shared.AccountRow | undefined,
    );
  }

  async findByUpstreamIdentity(issuer: string, subject: string) {
    const row = prepared(this.db, 'SELECT a.* FROM accounts a JOIN account_identities i ON i.account_id = a.id WHERE i.identity = ?').get(
      shared.upstreamIdentityKey(issuer, subject),
    ) as shared.AccountRow | undefined;
    return this.load(row);
  }

  async list() {
    const rows = prepared(this.db, 'SELECT * FROM accounts ORDER BY created_at, id').all() as shared.AccountRow[];
    return rows.map((r) => this.load(r)!);
  }

  async update(id: string, patch: AccountPatch) {
    const existing = await this.findById(id);
    if (!existing) throw shared.notFound();
    const record = shared.patchAccount(existing, patch, epochSeconds(this.clock()));
    this.write(record, false);
    return record;
  }
}
