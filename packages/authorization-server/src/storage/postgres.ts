/**
 * Shared store on PostgreSQL, for several AS instances behind one load balancer.
 *
 * Everything lives in one schema (created if missing) so deployments and test runs can share
 * a database. Start-up migrations and key changes take transaction-scoped advisory locks, so
 * instances starting together apply each migration once and end with the same keys.
 */
import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
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
} from './accounts.js';
import type { BackendParts, OpenStoreOptions } from './assemble.js';
import { type Clock, epochSeconds } from './clock.js';
import { checkSchemaName, DEFAULT_PG_SCHEMA } from './config.js';
import { driverMissing } from './errors.js';
import { signingFromRow, type CookieKeyRecord, type KeyBackend, type SigningRow } from './keys.js';
import { pendingMigrations, POSTGRES_MIGRATIONS } from './migrations.js';
import { Batcher, Gate } from './pg-batch.js';
import { isConnectionLoss, RECONNECT_ATTEMPTS, retryOnConnectionLoss } from './pg-reconnect.js';
import type { IndexedField, ModelBackend, ModelRow } from './model-rows.js';
import type { AccountRecord, AccountStore, KeyValueStore, StoredSigningKey } from './types.js';

const LIVE = '(expires_at IS NULL OR expires_at > $NOW)';

const statementNames = new Map<string, string>();
/**
 * A named statement: each pooled connection parses and plans it once, then only binds and runs
 * it (the per-request statements spend a good part of their time in parse and plan otherwise).
 * The name is derived from the text (schema included), so one name never means two texts.
 * Only for statements that name their columns: a cached `SELECT *` would fail once a
 * migration adds a column.
 */
function prepared(text: string, values: unknown[]): QueryConfig {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `mak_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/**
 * A statement that is safe to run twice (a read, an upsert of given values, a delete by key):
 * retried on another connection when its connection was dropped (see pg-reconnect.ts).
 */
function repeatable<R extends QueryResultRow>(pool: Pool, config: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>> {
  return retryOnConnectionLoss(() => (typeof config === 'string' ? pool.query<R>(config, values) : pool.query<R>(config)));
}

/**
 * A statement on the pool is {@link repeatable}; inside a transaction it runs as is (a lost
 * transaction connection fails the whole transaction, which its caller may start over).
 */
function onPoolOrTransaction<R extends QueryResultRow>(
  pool: Pool,
  client: Pool | PoolClient,
  sql: string,
  values?: unknown[],
): Promise<QueryResult<R>> {
  return client === pool ? repeatable<R>(pool, sql, values) : client.query<R>(sql, values);
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '23505';
}

/** Runs `fn` in a transaction; with `lock`, first takes that advisory lock for the transaction. */
async function inTransaction<T>(pool: Pool, lock: string | undefined, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await retryOnConnectionLoss(() => begin(pool));
  try {
    if (lock) await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lock]);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A pooled connection with a transaction open. A connection found dead at BEGIN is discarded
 * (nothing ran on it yet, so starting over on another one is always safe).
 */
async function begin(pool: Pool): Promise<PoolClient> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    return client;
  } catch (error) {
    client.release(isConnectionLoss(error) ? (error as Error) : undefined);
    throw error;
  }
}

async function migrate(pool: Pool, schema: string, q: string): Promise<void> {
  await inTransaction(pool, `mcp-auth-kit:migrate:${schema}`, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${q}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${q}.schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const applied = (await client.query<{ version: number }>(`SELECT version FROM ${q}.schema_migrations`)).rows.map((r) => r.version);
    for (const m of pendingMigrations(POSTGRES_MIGRATIONS, applied)) {
      await client.query(m.sql.replaceAll('{schema}', q));
      await client.query(`INSERT INTO ${q}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
  });
}

/**
 * Models whose lookup oidc-provider follows at once with `Grant.find(grantId)` (the code and
 * refresh grants): their row is read together with the live grant row, which the next
 * `Grant.find` of this instance is then answered from (one round trip fewer per token request).
 */
const GRANT_SOURCES: ReadonlySet<string> = new Set(['AuthorizationCode', 'RefreshToken']);
/**
 * The first `"accountId":"…"` member of a stored payload, read as text: a `::json ->>` would
 * fail on any `\u0000` in the payload (PostgreSQL text cannot hold it). A quote inside a JSON
 * string is always escaped, so this only matches a member; should it be a nested one, the
 * account read ahead is merely another one (entries are keyed by their own id) and unused.
 */
const ACCOUNT_ID_PATTERN = `'"accountId":"([^"\\\\]*)"'`;
/** How long (real time) a grant read alongside its code or refresh token answers the next `Grant.find`. */
const PREFETCH_MS = 200;
const PREFETCH_MAX = 1000;

/** Reads of one row kept at once: concurrent token requests of one user read the same grant and account. */
const PREFETCH_PER_ROW = 32;

/**
 * Rows read ahead by a token request for its own next lookup: each read used at most once, for
 * at most {@link PREFETCH_MS}, and dropped by any write of this instance to that row, so the
 * lookup that follows in the same request sees what the request read a moment before, never an
 * older state of this instance's own writes. Concurrent requests that read the same row (one
 * user's grant and account) each leave their read; a lookup takes the newest one, which is at
 * least as fresh as its own.
 */
class ReadAhead<T> {
  readonly #entries = new Map<string, { value: T; until: number }[]>();

  put(id: string, value: T): void {
    let reads = this.#entries.get(id);
    if (reads === undefined) {
      if (this.#entries.size >= PREFETCH_MAX) this.#entries.delete(this.#entries.keys().next().value as string);
      reads = [];
      this.#entries.set(id, reads);
    }
    if (reads.length >= PREFETCH_PER_ROW) reads.shift();
    reads.push({ value, until: performance.now() + PREFETCH_MS });
  }

  take(id: string): T | undefined {
    const reads = this.#entries.get(id);
    const newest = reads?.pop();
    if (newest === undefined) return undefined;
    // every other read of the row is older: once the newest has expired, they all have
    if (reads!.length === 0 || performance.now() > newest.until) this.#entries.delete(id);
    return performance.now() > newest.until ? undefined : newest.value;
  }

  drop(id: string): void {
    this.#entries.delete(id);
  }
}

interface PrefetchedGrant {
  payload: string;
  expiresAt: number | null;
}

interface PrefetchedAccount {
  row: AccountRow;
  identities: string[];
}

type GrantSourceRow = {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  grant_payload: string | null;
  grant_expires_at: string | null;
  identities: string[] | null;
} & {
  [K in keyof AccountRow as `a_${K}`]: AccountRow[K] | null;
};

interface RowKey {
  model: string;
  id: string;
  now: number;
}

interface StampInput extends RowKey {
  consumedAt: number;
}

const rowKey = (input: { model: string; id: string }) => `${input.model}\u0000${input.id}`;

/**
 * Inputs of a batch statement as a `VALUES` list, one row per input, `$1`… in row order (the
 * first row carries the column types). A list of fixed length is a plain prepared statement for
 * PostgreSQL, whose generic plan it caches; arrays through `unnest` looked like the natural
 * form, but their plan depends on the array lengths, so every execution was planned again and
 * cost the server more than the single statements it replaced.
 */
function valuesList(rows: unknown[][], types: string[]): { list: string; params: unknown[] } {
  const tuples = rows.map((_, r) => `(${types.map((type, c) => `$${r * types.length + c + 1}${r === 0 ? `::${type}` : ''}`).join(', ')})`);
  return { list: `(VALUES ${tuples.join(', ')})`, params: rows.flat() };
}

/**
 * The live row of `oidc_models` named by `v.model`, `v.id` (at `v.now`), looked up by its key
 * once per input. Written as a lateral subquery that cannot be merged into the outer join
 * (`OFFSET 0`) so that the plan is one index lookup per input whatever the table's statistics
 * say: a cached plan made while the table looked small (never analyzed, autovacuum off) was a
 * hash join over a sequential scan, which grows with the table.
 */
function liveRowPerInput(q: string, columns: string): string {
  return `LATERAL (SELECT ${columns} FROM ${q}.oidc_models m
                   WHERE m.model = v.model AND m.id = v.id AND ${LIVE.replace('$NOW', 'v.now')} OFFSET 0) m`;
}

/** Results of a batch statement put back in the order of its inputs (rows name model and id). */
function inInputOrder<T extends { model: string; id: string }>(inputs: { model: string; id: string }[], rows: T[]): (T | undefined)[] {
  const byKey = new Map(rows.map((row) => [rowKey(row), row]));
  return inputs.map((input) => byKey.get(rowKey(input)));
}

class PgModels implements ModelBackend {
  readonly #rows: Batcher<RowKey, AdapterPayload | undefined>;
  readonly #grantSources: Batcher<RowKey, GrantSourceRow | undefined>;
  readonly #upserts: Batcher<ModelRow, void>;
  readonly #stamps: Batcher<StampInput, boolean>;

  constructor(
    private readonly pool: Pool,
    private readonly q: string,
    /** Grant rows read with a code or refresh token (for the `Grant.find` that follows). */
    private readonly grants: ReadAhead<PrefetchedGrant>,
    /** Account rows read with a code or refresh token (for the `findAccount` that follows). */
    private readonly accounts: ReadAhead<PrefetchedAccount>,
  ) {
    // One statement of these four kinds at a time per instance: while it runs, the requests
    // that come meanwhile gather for the next (0.57 statements per code exchange at 10
    // concurrent exchanges, against 0.80 with one place per kind; see pg-batch.ts).
    const gate = new Gate(1);
    this.#rows = new Batcher<RowKey, AdapterPayload | undefined>(
      { key: rowKey, one: (k) => this.findRow(k.model, k.id, k.now), many: (ks) => this.findRows(ks) },
      gate,
    );
    this.#grantSources = new Batcher<RowKey, GrantSourceRow | undefined>(
      { key: rowKey, one: (k) => this.readGrantSource(k), many: (ks) => this.readGrantSources(ks) },
      gate,
    );
    this.#upserts = new Batcher<ModelRow, void>(
      { key: rowKey, one: (row) => this.upsertOne(row), many: (rows) => this.upsertMany(rows) },
      gate,
    );
    this.#stamps = new Batcher<StampInput, boolean>(
      { key: rowKey, one: (input, batchError) => this.consumeOne(input, batchError), many: (inputs) => this.stampMany(inputs) },
      gate,
    );
  }

  async upsert(row: ModelRow): Promise<void> {
    if (row.model === 'Grant') this.grants.drop(row.id);
    await this.#upserts.submit(row);
    // also after the write: a read-ahead that raced with it may hold the previous state
    if (row.model === 'Grant') this.grants.drop(row.id);
  }

  private static upsertValues(row: ModelRow): unknown[] {
    return [row.model, row.id, JSON.stringify(row.payload), row.grantId, row.uid, row.userCode, row.expiresAt];
  }

  private get upsertConflict(): string {
    return `ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
           uid = EXCLUDED.uid, user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at`;
  }

  private async upsertOne(row: ModelRow): Promise<void> {
    await repeatable(
      this.pool,
      prepared(
        `INSERT INTO ${this.q}.oidc_models (model, id, payload, grant_id, uid, user_code, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ${this.upsertConflict}`,
        PgModels.upsertValues(row),
      ),
    );
  }

  private async upsertMany(rows: ModelRow[]): Promise<void[]> {
    const { list, params } = valuesList(rows.map(PgModels.upsertValues), ['text', 'text', 'text', 'text', 'text', 'text', 'bigint']);
    await repeatable(
      this.pool,
      prepared(
        `INSERT INTO ${this.q}.oidc_models (model, id, payload, grant_id, uid, user_code, expires_at)
         SELECT * FROM ${list} AS v
         ${this.upsertConflict}`,
        params,
      ),
    );
    return rows.map(() => undefined);
  }

  private async one(sql: string, params: unknown[]): Promise<AdapterPayload | undefined> {
    const { rows } = await repeatable<{ payload: string }>(this.pool, prepared(sql, params));
    return rows[0] ? (JSON.parse(rows[0].payload) as AdapterPayload) : undefined;
  }

  /** The live row, read as is (no read-ahead on either side). */
  private findRow(model: string, id: string, now: number): Promise<AdapterPayload | undefined> {
    return this.one(`SELECT payload FROM ${this.q}.oidc_models WHERE model = $1 AND id = $2 AND ${LIVE.replace('$NOW', '$3')}`, [
      model,
      id,
      now,
    ]);
  }

  private static keyList(keys: RowKey[]) {
    return valuesList(
      keys.map((k) => [k.model, k.id, k.now]),
      ['text', 'text', 'bigint'],
    );
  }

  private async findRows(keys: RowKey[]): Promise<(AdapterPayload | undefined)[]> {
    const { list, params } = PgModels.keyList(keys);
    const { rows } = await repeatable<{ model: string; id: string; payload: string }>(
      this.pool,
      prepared(
        `SELECT m.model, m.id, m.payload FROM ${list} AS v(model, id, now) CROSS JOIN ${liveRowPerInput(this.q, 'm.model, m.id, m.payload')}`,
        params,
      ),
    );
    return inInputOrder(keys, rows).map((row) => (row ? (JSON.parse(row.payload) as AdapterPayload) : undefined));
  }

  async find(model: string, id: string, now: number) {
    if (model === 'Grant') {
      const hit = this.grants.take(id);
      if (hit !== undefined && (hit.expiresAt === null || hit.expiresAt > now)) return JSON.parse(hit.payload) as AdapterPayload;
    }
    if (GRANT_SOURCES.has(model)) return this.findWithGrant(model, id, now);
    return this.#rows.submit({ model, id, now });
  }

  /** The grant-source row with its live grant and account (see {@link GRANT_SOURCES}), `$1`…`$3` naming the rows. */
  private grantSourceSql(from: string, where: string, now: string): string {
    return `SELECT m.model, m.id, m.payload, m.grant_id, g.payload AS grant_payload, g.expires_at AS grant_expires_at,
           a.id AS a_id, a.username AS a_username, a.password_hash AS a_password_hash, a.display_name AS a_display_name,
           a.disabled AS a_disabled, a.created_at AS a_created_at, a.updated_at AS a_updated_at,
           CASE WHEN a.id IS NULL THEN NULL ELSE
             ARRAY(SELECT x.identity FROM ${this.q}.account_identities x WHERE x.account_id = a.id ORDER BY x.position) END AS identities
         FROM ${from}
         LEFT JOIN LATERAL (SELECT g.payload, g.expires_at FROM ${this.q}.oidc_models g
                            WHERE g.model = 'Grant' AND g.id = m.grant_id AND (g.expires_at IS NULL OR g.expires_at > ${now}) OFFSET 0) g ON true
         LEFT JOIN LATERAL (SELECT a.* FROM ${this.q}.accounts a WHERE a.id = substring(m.payload from ${ACCOUNT_ID_PATTERN}) OFFSET 0) a ON true
         WHERE ${where}`;
  }

  private async readGrantSource(key: RowKey): Promise<GrantSourceRow | undefined> {
    const { rows } = await repeatable<GrantSourceRow>(
      this.pool,
      prepared(
        this.grantSourceSql(`${this.q}.oidc_models m`, 'm.model = $1 AND m.id = $2 AND (m.expires_at IS NULL OR m.expires_at > $3)', '$3'),
        [key.model, key.id, key.now],
      ),
    );
    return rows[0];
  }

  private async readGrantSources(keys: RowKey[]): Promise<(GrantSourceRow | undefined)[]> {
    const { list, params } = PgModels.keyList(keys);
    const { rows } = await repeatable<GrantSourceRow>(
      this.pool,
      prepared(
        this.grantSourceSql(
          `${list} AS v(model, id, now) CROSS JOIN ${liveRowPerInput(this.q, 'm.model, m.id, m.payload, m.grant_id')}`,
          'true',
          'v.now',
        ),
        params,
      ),
    );
    return inInputOrder(keys, rows);
  }

  private async findWithGrant(model: string, id: string, now: number): Promise<AdapterPayload | undefined> {
    const row = await this.#grantSources.submit({ model, id, now });
    if (!row) return undefined;
    if (row.grant_id !== null && row.grant_payload !== null) {
      this.grants.put(row.grant_id, {
        payload: row.grant_payload,
        expiresAt: row.grant_expires_at === null ? null : Number(row.grant_expires_at),
      });
    }
    if (row.a_id !== null && row.identities !== null) {
      this.accounts.put(row.a_id, {
        row: {
          id: row.a_id,
          username: row.a_username!,
          password_hash: row.a_password_hash,
          display_name: row.a_display_name,
          disabled: row.a_disabled!,
          created_at: row.a_created_at!,
          updated_at: row.a_updated_at!,
        },
        identities: row.identities,
      });
    }
    return JSON.parse(row.payload) as AdapterPayload;
  }

  async findBy(model: string, field: IndexedField, value: string, now: number) {
    const column = field === 'uid' ? 'uid' : 'user_code';
    return this.one(
      `SELECT payload FROM ${this.q}.oidc_models WHERE model = $1 AND ${column} = $2 AND ${LIVE.replace('$NOW', '$3')} LIMIT 1`,
      [model, value, now],
    );
  }

  consume(model: string, id: string, consumedAt: number, now: number): Promise<boolean> {
    return this.#stamps.submit({ model, id, consumedAt, now });
  }

  /**
   * A dropped connection does not say whether the stamp ran, so the statement is not simply
   * repeated (a second run would find its own stamp and report a replay). It is run again only
   * when a fresh read shows the row still live and unstamped: the lost statement did not commit
   * then, and if it is somehow still running elsewhere, the row lock lets exactly one of the two
   * stamp (the other reports a replay: safe, never a second issuance). A row found stamped may
   * be this request's own lost stamp or a competitor's; that stays a failure. The same holds
   * for a batch whose connection was lost (`batchError`); a batch that failed otherwise was
   * rolled back, and its inputs are simply stamped one by one.
   */
  private async consumeOne(input: StampInput, batchError?: unknown): Promise<boolean> {
    const { model, id, now } = input;
    if (batchError !== undefined && isConnectionLoss(batchError)) {
      const row = await this.findRow(model, id, now);
      if (row === undefined || row.consumed !== undefined) throw batchError;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.stamp(input);
      } catch (error) {
        if (attempt >= RECONNECT_ATTEMPTS || !isConnectionLoss(error)) throw error;
        const row = await this.findRow(model, id, now);
        if (row === undefined || row.consumed !== undefined) throw error;
      }
    }
  }

  // Payloads are stored as JSON text (jsonb would refuse a \u0000 in a string), so the stamp
  // is appended as a last member in one statement (one round trip, no transaction): the
  // payload is always a `JSON.stringify`d object. The statement is conditional on the row
  // not being consumed yet: a concurrent second UPDATE waits for the first one's row lock,
  // then re-checks its WHERE on the new row version (READ COMMITTED) and matches nothing, so
  // exactly one caller, on any instance, stamps the row. The check is textual, not `->`
  // (which fails on a \u0000 or a lone surrogate anywhere in the payload): a stamp is always
  // the last member, and `"consumed":<digits>}` at the very end can only be a top-level
  // member (inside a string every `"` is escaped; a nested object would end in `}}`).
  private static readonly STAMPED = `'"consumed":[0-9]+}$'`;

  private static stampedPayload(stamp: string): string {
    return `CASE WHEN payload = '{}' THEN '{"consumed":' || ${stamp} || '}'
                 ELSE left(payload, -1) || ',"consumed":' || ${stamp} || '}' END`;
  }

  /** The conditional stamp of one row, its parameters (model, id, stamp, now) from `$(at + 1)` on. */
  private stampSql(at: number): string {
    return `UPDATE ${this.q}.oidc_models
         SET payload = ${PgModels.stampedPayload(`$${at + 3}::text`)}
         WHERE model = $${at + 1} AND id = $${at + 2} AND ${LIVE.replace('$NOW', `$${at + 4}`)}
           AND payload !~ ${PgModels.STAMPED}`;
  }

  private static stampParams(input: StampInput): unknown[] {
    return [input.model, input.id, JSON.stringify(input.consumedAt), input.now];
  }

  private async stamp(input: StampInput): Promise<boolean> {
    const result = await this.pool.query(prepared(this.stampSql(0), PgModels.stampParams(input)));
    return result.rowCount === 1;
  }

  /**
   * Several stamps in one statement (one row each, never two of one row): which rows it stamped.
   * Each input is its own `UPDATE` by key (the single statement's plan, an index lookup), run
   * in input order, so that the rows are locked in key order.
   */
  private async stampMany(inputs: StampInput[]): Promise<boolean[]> {
    const branches = inputs.map((_, i) => `s${i} AS (${this.stampSql(4 * i)} RETURNING model, id)`);
    const { rows } = await this.pool.query<{ model: string; id: string }>(
      prepared(
        `WITH ${branches.join(',\n')}
         ${inputs.map((_, i) => `SELECT model, id FROM s${i}`).join(' UNION ALL ')}`,
        inputs.flatMap(PgModels.stampParams),
      ),
    );
    return inInputOrder(inputs, rows).map((row) => row !== undefined);
  }

  async destroy(model: string, id: string) {
    if (model === 'Grant') this.grants.drop(id);
    await repeatable(this.pool, prepared(`DELETE FROM ${this.q}.oidc_models WHERE model = $1 AND id = $2`, [model, id]));
  }

  async revokeByGrantId(grantId: string) {
    this.grants.drop(grantId);
    await repeatable(this.pool, prepared(`DELETE FROM ${this.q}.oidc_models WHERE grant_id = $1`, [grantId]));
  }
}

class PgKeys implements KeyBackend {
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

class PgAccounts implements AccountStore {
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
        `SELECT a.id, a.username, a.password_hash, a.display_name, a.disabled, a.created_at, a.updated_at,
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

  create(account: Omit<AccountRecord, 'createdAt' | 'updatedAt'>) {
    const record = newAccount(account, epochSeconds(this.clock()));
    return this.write(async (client) => {
      await client.query(
        `INSERT INTO ${this.q}.accounts (id, username, username_key, password_hash, display_name, disabled, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          record.id,
          record.username,
          usernameKey(record.username),
          record.passwordHash,
          record.displayName ?? null,
          record.disabled,
          record.createdAt,
          record.updatedAt,
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

  async update(id: string, patch: Partial<Omit<AccountRecord, 'id' | 'createdAt' | 'updatedAt'>>) {
    this.readAhead.drop(id);
    try {
      return await this.updateRow(id, patch);
    } finally {
      // also after the write: a read-ahead that raced with it may hold the previous state
      this.readAhead.drop(id);
    }
  }

  private updateRow(id: string, patch: Partial<Omit<AccountRecord, 'id' | 'createdAt' | 'updatedAt'>>) {
    return this.write(async (client) => {
      const { rows } = await client.query<AccountRow>(`SELECT * FROM ${this.q}.accounts WHERE id = $1 FOR UPDATE`, [id]);
      const [existing] = await this.load(client, rows);
      if (!existing) throw notFound();
      const record = patchAccount(existing, patch, epochSeconds(this.clock()));
      await client.query(
        `UPDATE ${this.q}.accounts SET username = $2, username_key = $3, password_hash = $4, display_name = $5, disabled = $6, updated_at = $7 WHERE id = $1`,
        [
          id,
          record.username,
          usernameKey(record.username),
          record.passwordHash,
          record.displayName ?? null,
          record.disabled,
          record.updatedAt,
        ],
      );
      await client.query(`DELETE FROM ${this.q}.account_identities WHERE account_id = $1`, [id]);
      await this.writeIdentities(client, record);
      return record;
    });
  }
}

/** JSON number text, as `JSON.stringify` writes it (so `::numeric` cannot fail). */
const JSON_NUMBER = `'^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?$'`;

class PgKv implements KeyValueStore {
  constructor(
    private readonly pool: Pool,
    private readonly q: string,
    private readonly clock: Clock,
  ) {}

  async get<T = unknown>(namespace: string, key: string): Promise<T | undefined> {
    const { rows } = await repeatable<{ value: string }>(
      this.pool,
      prepared(`SELECT value FROM ${this.q}.kv WHERE namespace = $1 AND key = $2 AND expires_at > $3`, [namespace, key, this.clock()]),
    );
    return rows[0] ? (JSON.parse(rows[0].value) as T) : undefined;
  }

  async set(namespace: string, key: string, value: unknown, ttlSeconds: number) {
    await repeatable(
      this.pool,
      prepared(
        `INSERT INTO ${this.q}.kv (namespace, key, value, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
        [namespace, key, JSON.stringify(value ?? null), Math.round(this.clock() + ttlSeconds * 1000)],
      ),
    );
  }

  async increment(namespace: string, key: string, by: number, ttlSeconds: number) {
    const now = this.clock();
    // One statement (row-locked by ON CONFLICT): a live numeric counter grows, anything else restarts at `by`.
    const live = `kv.expires_at > $5 AND kv.value ~ ${JSON_NUMBER}`;
    // Not retried after a dropped connection: the first run may have counted already.
    const { rows } = await this.pool.query<{ value: string }>(
      prepared(
        `INSERT INTO ${this.q}.kv AS kv (namespace, key, value, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (namespace, key) DO UPDATE SET
           value = CASE WHEN ${live} THEN (kv.value::numeric + $6::numeric)::text ELSE EXCLUDED.value END,
           expires_at = CASE WHEN ${live} THEN kv.expires_at ELSE EXCLUDED.expires_at END
         RETURNING value`,
        [namespace, key, JSON.stringify(by), Math.round(now + ttlSeconds * 1000), now, by],
      ),
    );
    return Number(rows[0]!.value);
  }

  async decrement(namespace: string, key: string, by: number) {
    // Only a live numeric counter changes (row-locked by UPDATE): nothing is created, no window restarts.
    // Not retried after a dropped connection: the first run may have counted already.
    const { rows } = await this.pool.query<{ value: string }>(
      prepared(
        `UPDATE ${this.q}.kv AS kv SET value = GREATEST(0, kv.value::numeric - $3::numeric)::text
         WHERE kv.namespace = $1 AND kv.key = $2 AND kv.expires_at > $4 AND kv.value ~ ${JSON_NUMBER}
         RETURNING value`,
        [namespace, key, by, this.clock()],
      ),
    );
    return rows[0] ? Number(rows[0].value) : undefined;
  }

  async delete(namespace: string, key: string) {
    await repeatable(this.pool, prepared(`DELETE FROM ${this.q}.kv WHERE namespace = $1 AND key = $2`, [namespace, key]));
  }
}

export async function openPostgresBackend(
  url: string,
  schemaOption: string | undefined,
  clock: Clock,
  options: OpenStoreOptions,
): Promise<BackendParts> {
  const schema = checkSchemaName(schemaOption ?? DEFAULT_PG_SCHEMA);
  const q = `"${schema}"`;
  let pg: typeof import('pg').default;
  try {
    ({ default: pg } = await import('pg'));
  } catch (error) {
    throw driverMissing('PostgreSQL', 'pg', error);
  }
  const pool = new pg.Pool({ connectionString: url, max: 10, idleTimeoutMillis: 30_000, application_name: 'mcp-auth-kit' });
  // An idle client dropped by the server must not crash the process; the pool replaces it.
  pool.on('error', (error) => options.onError?.(error));
  try {
    await migrate(pool, schema, q);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }

  const grantsAhead = new ReadAhead<PrefetchedGrant>();
  const accountsAhead = new ReadAhead<PrefetchedAccount>();
  return {
    kind: 'postgres',
    models: new PgModels(pool, q, grantsAhead, accountsAhead),
    keys: new PgKeys(pool, q, `mcp-auth-kit:keys:${schema}`),
    accounts: new PgAccounts(pool, q, clock, accountsAhead),
    kv: new PgKv(pool, q, clock),
    ping: async () => {
      await repeatable(pool, 'SELECT 1');
    },
    async cleanup(now: number) {
      const models = await repeatable(pool, `DELETE FROM ${q}.oidc_models WHERE expires_at IS NOT NULL AND expires_at <= $1`, [now]);
      const kv = await repeatable(pool, `DELETE FROM ${q}.kv WHERE expires_at <= $1`, [now]);
      const keys = await repeatable(pool, `DELETE FROM ${q}.signing_keys WHERE status = 'retired' AND retire_after <= $1`, [
        epochSeconds(now),
      ]);
      return (models.rowCount ?? 0) + (kv.rowCount ?? 0) + (keys.rowCount ?? 0);
    },
    close: () => pool.end(),
  };
}
