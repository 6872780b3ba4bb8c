/**
 * Embedded store: one SQLite file (WAL mode), the default for a single AS instance, on
 * `node:sqlite` or better-sqlite3 (`driver.ts`). Both drivers are synchronous, so each
 * method is one short synchronous step and every read-modify-write runs in an IMMEDIATE
 * transaction (safe across processes sharing the file).
 */
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AdapterPayload } from 'oidc-provider';
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
import type { BackendParts } from '../assemble.js';
import { type Clock, epochSeconds } from '../clock.js';
import { StorageError } from '../errors.js';
import { signingFromRow, type CookieKeyRecord, type KeyBackend, type SigningRow } from '../keys.js';
import { pendingMigrations, SQLITE_MIGRATIONS } from '../migrations.js';
import type { IndexedField, ModelBackend, ModelRow, Stamp } from '../model-rows.js';
import { CommitGroup } from './commit-group.js';
import { openSqliteDriver, type SqliteDriver, type SqliteDriverName, type SqliteStatement } from './driver.js';
import type { AccountPatch, AccountRecord, AccountStore, KeyValueEntry, KeyValueStore, NewAccount, StoredSigningKey } from '../types.js';

type Db = SqliteDriver;

const LIVE = '(expires_at IS NULL OR expires_at > @now)';

const statements = new WeakMap<Db, Map<string, SqliteStatement>>();
/**
 * The compiled statement for `sql` on this connection, compiled once: both drivers'
 * `prepare` compiles anew at every call, which costs more than running the small statements
 * of a token request. SQLite recompiles a cached statement by itself after a schema change.
 */
function prepared(db: Db, sql: string): SqliteStatement {
  let cache = statements.get(db);
  if (cache === undefined) {
    cache = new Map();
    statements.set(db, cache);
  }
  let statement = cache.get(sql);
  if (statement === undefined) {
    statement = db.prepare(sql);
    cache.set(sql, statement);
  }
  return statement;
}

function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  db.transaction(() => {
    const applied = (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version);
    for (const m of pendingMigrations(SQLITE_MIGRATIONS, applied)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
    }
  }, 'immediate');
}

class SqliteModels implements ModelBackend {
  constructor(
    private readonly db: Db,
    private readonly writes: CommitGroup,
  ) {}

  async upsert(row: ModelRow): Promise<void> {
    const params = SqliteModels.upsertParams(row);
    await this.writes.submit(() => this.upsertNow(params));
  }

  /** The row's statement parameters, made before the write joins a group: a payload that cannot be saved fails alone. */
  private static upsertParams(row: ModelRow) {
    return { ...row, payload: JSON.stringify(row.payload) };
  }

  private upsertNow(params: ReturnType<typeof SqliteModels.upsertParams>): void {
    prepared(
      this.db,
      `INSERT INTO oidc_models (model, id, payload, grant_id, uid, user_code, expires_at)
       VALUES (@model, @id, @payload, @grantId, @uid, @userCode, @expiresAt)
       ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
         uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`,
    ).run(params);
  }

  private one(sql: string, params: Record<string, unknown>): AdapterPayload | undefined {
    const row = prepared(this.db, sql).get(params) as { payload: string } | undefined;
    return row ? (JSON.parse(row.payload) as AdapterPayload) : undefined;
  }

  async find(model: string, id: string, now: number) {
    return this.one(`SELECT payload FROM oidc_models WHERE model = @model AND id = @id AND ${LIVE}`, { model, id, now });
  }

  async findBy(model: string, field: IndexedField, value: string, now: number) {
    const column = field === 'uid' ? 'uid' : 'user_code';
    return this.one(`SELECT payload FROM oidc_models WHERE model = @model AND ${column} = @value AND ${LIVE} LIMIT 1`, {
      model,
      value,
      now,
    });
  }

  async consume(model: string, id: string, consumedAt: number, now: number) {
    return this.writes.submit(() => this.stampNow({ model, id, consumedAt, now }));
  }

  /**
   * One conditional UPDATE: SQLite serialises writers, so of two processes on the same file
   * only the first sees its row still unconsumed.
   */
  private stampNow(stamp: Stamp): boolean {
    const { changes } = prepared(
      this.db,
      `UPDATE oidc_models SET payload = json_set(payload, '$.consumed', @consumedAt)
       WHERE model = @model AND id = @id AND ${LIVE} AND json_type(payload, '$.consumed') IS NULL`,
    ).run(stamp);
    return Number(changes) === 1;
  }

  /** A refresh token's stamp and its successor's row in one transaction: both or neither. */
  async rotate(stamp: Stamp, row: ModelRow): Promise<void> {
    const params = SqliteModels.upsertParams(row);
    await this.writes.submit(() =>
      this.db.transaction(() => {
        this.stampNow(stamp);
        this.upsertNow(params);
      }, 'immediate'),
    );
  }

  async destroy(model: string, id: string) {
    await this.writes.submit(() => prepared(this.db, 'DELETE FROM oidc_models WHERE model = ? AND id = ?').run(model, id));
  }

  async revokeByGrantId(grantId: string) {
    await this.writes.submit(() => prepared(this.db, 'DELETE FROM oidc_models WHERE grant_id = ?').run(grantId));
  }
}

class SqliteKeys implements KeyBackend {
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

class SqliteAccounts implements AccountStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  private load(row: AccountRow | undefined): AccountRecord | undefined {
    if (!row) return undefined;
    const ids = prepared(this.db, 'SELECT identity FROM account_identities WHERE account_id = ? ORDER BY position').all(row.id) as {
      identity: string;
    }[];
    return accountFromRow(
      row,
      ids.map((r) => r.identity),
    );
  }

  private write(record: AccountRecord, insert: boolean): void {
    const params = {
      id: record.id,
      username: record.username,
      usernameKey: usernameKey(record.username),
      passwordHash: record.passwordHash,
      displayName: record.displayName ?? null,
      disabled: record.disabled ? 1 : 0,
      source: record.source,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    };
    // node:sqlite refuses a named parameter its statement does not use.
    const { createdAt: _createdAt, source: _source, ...update } = params;
    try {
      this.db.transaction(() => {
        if (insert) {
          prepared(
            this.db,
            `INSERT INTO accounts (id, username, username_key, password_hash, display_name, disabled, source, created_at, updated_at)
             VALUES (@id, @username, @usernameKey, @passwordHash, @displayName, @disabled, @source, @createdAt, @updatedAt)`,
          ).run(params);
        } else {
          prepared(
            this.db,
            `UPDATE accounts SET username = @username, username_key = @usernameKey, password_hash = @passwordHash,
             display_name = @displayName, disabled = @disabled, updated_at = @updatedAt WHERE id = @id`,
          ).run(update);
          prepared(this.db, 'DELETE FROM account_identities WHERE account_id = ?').run(record.id);
        }
        const add = prepared(this.db, 'INSERT INTO account_identities (identity, account_id, position) VALUES (?, ?, ?)');
        for (const [i, identity] of (record.upstreamIdentities ?? []).entries()) add.run(identity, record.id, i);
      }, 'immediate');
    } catch (error) {
      if (this.db.isUniqueViolation(error)) throw conflict('account (id, username or upstream identity)', error);
      throw error;
    }
  }

  async create(account: NewAccount) {
    const record = newAccount(account, epochSeconds(this.clock()));
    this.write(record, true);
    return record;
  }

  async findById(id: string) {
    return this.load(prepared(this.db, 'SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined);
  }

  async findByUsername(username: string) {
    return this.load(
      prepared(this.db, 'SELECT * FROM accounts WHERE username_key = ?').get(usernameKey(username)) as AccountRow | undefined,
    );
  }

  async findByUpstreamIdentity(issuer: string, subject: string) {
    const row = prepared(this.db, 'SELECT a.* FROM accounts a JOIN account_identities i ON i.account_id = a.id WHERE i.identity = ?').get(
      upstreamIdentityKey(issuer, subject),
    ) as AccountRow | undefined;
    return this.load(row);
  }

  async list() {
    const rows = prepared(this.db, 'SELECT * FROM accounts ORDER BY created_at, id').all() as AccountRow[];
    return rows.map((r) => this.load(r)!);
  }

  async update(id: string, patch: AccountPatch) {
    const existing = await this.findById(id);
    if (!existing) throw notFound();
    const record = patchAccount(existing, patch, epochSeconds(this.clock()));
    this.write(record, false);
    return record;
  }
}

class SqliteKv implements KeyValueStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly writes: CommitGroup,
  ) {}

  async get<T = unknown>(namespace: string, key: string): Promise<T | undefined> {
    const row = prepared(this.db, 'SELECT value FROM kv WHERE namespace = ? AND key = ? AND expires_at > ?').get(
      namespace,
      key,
      this.clock(),
    ) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  async set(namespace: string, key: string, value: unknown, ttlSeconds: number) {
    const params = [namespace, key, JSON.stringify(value ?? null), this.clock() + ttlSeconds * 1000];
    await this.writes.submit(() =>
      prepared(
        this.db,
        `INSERT INTO kv (namespace, key, value, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
      ).run(...params),
    );
  }

  async increment(namespace: string, key: string, by: number, ttlSeconds: number) {
    const now = this.clock();
    // One statement: a live numeric counter grows, anything else (absent, expired, not a number) restarts at `by`.
    const params = { namespace, key, initial: JSON.stringify(by), expiresAt: now + ttlSeconds * 1000, now, by };
    const row = await this.writes.submit(
      () =>
        prepared(
          this.db,
          `INSERT INTO kv (namespace, key, value, expires_at) VALUES (@namespace, @key, @initial, @expiresAt)
           ON CONFLICT (namespace, key) DO UPDATE SET
             value = CASE WHEN kv.expires_at > @now AND json_type(kv.value) IN ('integer', 'real')
                          THEN CAST(kv.value + @by AS TEXT) ELSE excluded.value END,
             expires_at = CASE WHEN kv.expires_at > @now AND json_type(kv.value) IN ('integer', 'real')
                          THEN kv.expires_at ELSE excluded.expires_at END
           RETURNING value`,
        ).get(params) as { value: string },
    );
    return Number(JSON.parse(row.value));
  }

  async decrement(namespace: string, key: string, by: number) {
    // Only a live numeric counter changes: nothing is created, no window restarts.
    const params = { namespace, key, by, now: this.clock() };
    const row = await this.writes.submit(
      () =>
        prepared(
          this.db,
          `UPDATE kv SET value = CAST(MAX(0, kv.value - @by) AS TEXT)
           WHERE namespace = @namespace AND key = @key AND expires_at > @now AND json_type(value) IN ('integer', 'real')
           RETURNING value`,
        ).get(params) as { value: string } | undefined,
    );
    return row ? Number(JSON.parse(row.value)) : undefined;
  }

  async delete(namespace: string, key: string) {
    await this.writes.submit(() => prepared(this.db, 'DELETE FROM kv WHERE namespace = ? AND key = ?').run(namespace, key));
  }

  async list<T = unknown>(namespace: string): Promise<KeyValueEntry<T>[]> {
    const rows = prepared(this.db, 'SELECT key, value, expires_at FROM kv WHERE namespace = ? AND expires_at > ?').all(
      namespace,
      this.clock(),
    ) as { key: string; value: string; expires_at: number | bigint }[];
    return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as T, expiresAt: Number(r.expires_at) }));
  }
}

export async function openSqliteBackend(file: string, clock: Clock, driver?: SqliteDriverName): Promise<BackendParts> {
  if (typeof file !== 'string' || file === '') throw new StorageError('sqlite storage needs a file path', 'misconfigured');
  const dir = dirname(file);
  // The file holds private signing keys: keep the folder and file private to this user.
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const created = !existsSync(file);
  const db = await openSqliteDriver(file, driver);
  try {
    if (created) chmodSync(file, 0o600);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA busy_timeout = 5000');
    db.exec('PRAGMA foreign_keys = ON');
    db.exec('PRAGMA synchronous = NORMAL');
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }

  const writes = new CommitGroup(db);
  return {
    kind: 'sqlite',
    models: new SqliteModels(db, writes),
    keys: new SqliteKeys(db),
    accounts: new SqliteAccounts(db, clock),
    kv: new SqliteKv(db, clock, writes),
    ping: async () => {
      prepared(db, 'SELECT 1').get();
    },
    async cleanup(now: number) {
      return db.transaction(() => {
        const models = db.prepare('DELETE FROM oidc_models WHERE expires_at IS NOT NULL AND expires_at <= ?').run(now).changes;
        const kv = db.prepare('DELETE FROM kv WHERE expires_at <= ?').run(now).changes;
        const keys = db.prepare("DELETE FROM signing_keys WHERE status = 'retired' AND retire_after <= ?").run(epochSeconds(now)).changes;
        return Number(models) + Number(kv) + Number(keys);
      });
    },
    close: async () => {
      writes.flush();
      db.close();
    },
  };
}
