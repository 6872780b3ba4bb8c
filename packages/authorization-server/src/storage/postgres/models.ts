/** oidc-provider's models (grants, codes, tokens, sessions …) in `oidc_models`. */
import type { Pool } from 'pg';
import type { AdapterPayload } from 'oidc-provider';
import type { AccountRow } from '../accounts.js';
import type { IndexedField, ModelBackend, ModelRow, NextRow, Stamp } from '../model-rows.js';
import { Batcher, Gate } from './batch.js';
import { isConnectionLoss, RECONNECT_ATTEMPTS } from './reconnect.js';
import { inInputOrder, liveRowPerInput, type RowKey, rowKey, valuesList } from './batch-sql.js';
import { type PrefetchedAccount, type PrefetchedGrant, ReadAhead } from './read-ahead.js';
import { LIVE, prepared, repeatable } from './statements.js';

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

/** A refresh token's rotation: the old token stamped, its successor saved (see `rotate`). */
interface Rotation {
  stamp: Stamp;
  row: ModelRow;
}

const UPSERT_TYPES = ['text', 'text', 'text', 'text', 'text', 'text', 'bigint'];

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

export class PgModels implements ModelBackend {
  readonly #rows: Batcher<RowKey, AdapterPayload | undefined>;
  readonly #grantSources: Batcher<RowKey, GrantSourceRow | undefined>;
  readonly #upserts: Batcher<ModelRow, void>;
  readonly #stamps: Batcher<Stamp, boolean>;
  readonly #rotations: Batcher<Rotation, boolean>;
  /**
   * Codes and refresh tokens read with the client of their token request (see `find`), for
   * the lookup that follows; a row found missing is kept as such. Dropped by any write of this
   * instance to the row (a consume, an upsert, a delete, a grant's revocation).
   */
  readonly #sources = new ReadAhead<{ row: GrantSourceRow | undefined }>();

  constructor(
    private readonly pool: Pool,
    private readonly q: string,
    /** Grant rows read with a code or refresh token (for the `Grant.find` that follows). */
    private readonly grants: ReadAhead<PrefetchedGrant>,
    /** Account rows read with a code or refresh token (for the `findAccount` that follows). */
    private readonly accounts: ReadAhead<PrefetchedAccount>,
  ) {
    // One gate for these five kinds, three statements at a time per instance: while they run, the
    // requests that come meanwhile gather for the next, so a shared gate sends fewer statements
    // per code exchange than a gate per kind would (see batch.ts). More than one place, because
    // with a single one every request queues behind each round trip, and where round trips are
    // slow the AS then spends much of its time under load waiting instead of answering.
    const gate = new Gate(3);
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
    this.#stamps = new Batcher<Stamp, boolean>(
      { key: rowKey, one: (input, batchError) => this.consumeOne(input, batchError), many: (inputs) => this.stampMany(inputs) },
      gate,
    );
    // keyed by the stamped row: two rotations of one token never share a statement
    this.#rotations = new Batcher<Rotation, boolean>(
      { key: (r) => rowKey(r.stamp), one: (r, batchError) => this.rotateOne(r, batchError), many: (rs) => this.rotateMany(rs) },
      gate,
    );
  }

  async upsert(row: ModelRow): Promise<void> {
    this.dropReadAhead(row.model, row.id);
    await this.#upserts.submit(row);
    // also after the write: a read-ahead that raced with it may hold the previous state
    this.dropReadAhead(row.model, row.id);
  }

  private dropReadAhead(model: string, id: string): void {
    if (model === 'Grant') this.grants.drop(id);
    else if (GRANT_SOURCES.has(model)) this.#sources.drop(rowKey({ model, id }));
  }

  private static upsertValues(row: ModelRow): unknown[] {
    return [row.model, row.id, JSON.stringify(row.payload), row.grantId, row.uid, row.userCode, row.expiresAt];
  }

  /**
   * The upsert of the rows `source` gives: `VALUES (…)` of one row or `SELECT * FROM (VALUES …)`
   * of several, in the column order of {@link upsertValues}.
   */
  private upsertSql(source: string): string {
    return `INSERT INTO ${this.q}.oidc_models (model, id, payload, grant_id, uid, user_code, expires_at)
         ${source}
         ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
           uid = EXCLUDED.uid, user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at`;
  }

  private async upsertOne(row: ModelRow): Promise<void> {
    await repeatable(this.pool, prepared(this.upsertSql('VALUES ($1, $2, $3, $4, $5, $6, $7)'), PgModels.upsertValues(row)));
  }

  private async upsertMany(rows: ModelRow[]): Promise<void[]> {
    const { list, params } = valuesList(rows.map(PgModels.upsertValues), UPSERT_TYPES);
    await repeatable(this.pool, prepared(this.upsertSql(`SELECT * FROM ${list} AS v`), params));
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

  async find(model: string, id: string, now: number, next?: NextRow) {
    if (model === 'Grant') {
      const hit = this.grants.take(id);
      if (hit !== undefined && (hit.expiresAt === null || hit.expiresAt > now)) return JSON.parse(hit.payload) as AdapterPayload;
    }
    if (GRANT_SOURCES.has(model)) return this.findWithGrant(model, id, now);
    if (next && GRANT_SOURCES.has(next.model)) return this.findWithNext(model, id, now, next);
    return this.#rows.submit({ model, id, now });
  }

  /**
   * A token request's client, and in the same statement (one batch of the grant-source reads)
   * the code or refresh token it presents, with its grant and account: the provider looks
   * that row up right after authenticating the client (one round trip fewer per exchange and
   * per refresh). The row is kept for that lookup only (see {@link #sources}).
   */
  private async findWithNext(model: string, id: string, now: number, next: NextRow): Promise<AdapterPayload | undefined> {
    const key = rowKey(next);
    const ahead = this.#grantSources.submit({ model: next.model, id: next.id, now }).then(
      (row) => this.#sources.put(key, { row }),
      () => undefined, // the lookup that follows reads it again
    );
    const [row] = await Promise.all([this.#grantSources.submit({ model, id, now }), ahead]);
    return row ? (JSON.parse(row.payload) as AdapterPayload) : undefined;
  }

  /** The grant-source row with its live grant and account (see {@link GRANT_SOURCES}), `$1`…`$3` naming the rows. */
  private grantSourceSql(from: string, where: string, now: string): string {
    return `SELECT m.model, m.id, m.payload, m.grant_id, g.payload AS grant_payload, g.expires_at AS grant_expires_at,
           a.id AS a_id, a.username AS a_username, a.password_hash AS a_password_hash, a.display_name AS a_display_name,
           a.disabled AS a_disabled, a.admin AS a_admin, a.source AS a_source, a.created_at AS a_created_at, a.updated_at AS a_updated_at,
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
    const ahead = this.#sources.take(rowKey({ model, id }));
    // read with the request's client a moment ago; `expires_at` was checked then, and the read is younger than a second
    const row = ahead !== undefined ? ahead.row : await this.#grantSources.submit({ model, id, now });
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
          admin: Boolean(row.a_admin),
          source: row.a_source!,
          created_at: row.a_created_at!,
          updated_at: row.a_updated_at!,
        },
        identities: row.identities,
      });
    }
    return JSON.parse(row.payload) as AdapterPayload;
  }

  async list(model: string, now: number) {
    const { rows } = await repeatable<{ id: string; payload: string }>(
      this.pool,
      `SELECT id, payload FROM ${this.q}.oidc_models WHERE model = $1 AND ${LIVE.replace('$NOW', '$2')} ORDER BY id COLLATE "C"`,
      [model, now],
    );
    return rows.map((r) => ({ id: r.id, payload: JSON.parse(r.payload) as AdapterPayload }));
  }

  async findBy(model: string, field: IndexedField, value: string, now: number) {
    const column = field === 'uid' ? 'uid' : 'user_code';
    return this.one(
      `SELECT payload FROM ${this.q}.oidc_models WHERE model = $1 AND ${column} = $2 AND ${LIVE.replace('$NOW', '$3')} LIMIT 1`,
      [model, value, now],
    );
  }

  async consume(model: string, id: string, consumedAt: number, now: number): Promise<boolean> {
    this.dropReadAhead(model, id);
    try {
      return await this.#stamps.submit({ model, id, consumedAt, now });
    } finally {
      this.dropReadAhead(model, id);
    }
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
  private async consumeOne(input: Stamp, batchError?: unknown): Promise<boolean> {
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

  private static stampParams(input: Stamp): unknown[] {
    return [input.model, input.id, JSON.stringify(input.consumedAt), input.now];
  }

  private async stamp(input: Stamp): Promise<boolean> {
    const result = await this.pool.query(prepared(this.stampSql(0), PgModels.stampParams(input)));
    return result.rowCount === 1;
  }

  /**
   * Several stamps in one statement (one row each, never two of one row): which rows it stamped.
   * Each input is its own `UPDATE` by key (the single statement's plan, an index lookup), run
   * in input order, so that the rows are locked in key order.
   */
  private async stampMany(inputs: Stamp[]): Promise<boolean[]> {
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

  async rotate(stamp: Stamp, row: ModelRow): Promise<boolean> {
    this.dropReadAhead(stamp.model, stamp.id);
    this.dropReadAhead(row.model, row.id);
    try {
      return await this.#rotations.submit({ stamp, row });
    } finally {
      this.dropReadAhead(stamp.model, stamp.id);
      this.dropReadAhead(row.model, row.id);
    }
  }

  /**
   * A rotation is one statement: the conditional stamp, and the successor's upsert only where
   * the stamp took, so both commit or neither does and of two rotations of one token (on any
   * instance: the second UPDATE waits for the first one's row lock, then matches nothing) only
   * the first saves its successor. A dropped connection does not say whether the statement
   * committed; the database does: the successor's row (its id is the new token's own, written
   * by no one else) is there when it did. When it is not and the old token is still live and
   * unstamped, the statement is run again; when the old token was stamped, another rotation won.
   * The same holds for a batch whose connection was lost (`batchError`).
   */
  private async rotateOne(rotation: Rotation, batchError?: unknown): Promise<boolean> {
    if (batchError !== undefined && isConnectionLoss(batchError)) {
      const settled = await this.rotationOutcome(rotation);
      if (settled !== undefined) return settled;
    }
    const { stamp, row } = rotation;
    const { list, params } = valuesList([PgModels.upsertValues(row)], UPSERT_TYPES, 4);
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.pool.query(
          prepared(
            `WITH s AS (${this.stampSql(0)} RETURNING 1)
             ${this.upsertSql(`SELECT * FROM ${list} AS v WHERE EXISTS (SELECT 1 FROM s)`)}
             RETURNING 1`,
            [...PgModels.stampParams(stamp), ...params],
          ),
        );
        return result.rowCount === 1;
      } catch (error) {
        if (attempt >= RECONNECT_ATTEMPTS || !isConnectionLoss(error)) throw error;
        const settled = await this.rotationOutcome(rotation);
        if (settled !== undefined) return settled;
      }
    }
  }

  /** After a lost connection: whether the rotation took (its successor saved), lost (the old token stamped or gone), or neither yet. */
  private async rotationOutcome({ stamp, row }: Rotation): Promise<boolean | undefined> {
    if ((await this.findRow(row.model, row.id, stamp.now)) !== undefined) return true;
    const old = await this.findRow(stamp.model, stamp.id, stamp.now);
    return old === undefined || old.consumed !== undefined ? false : undefined;
  }

  /**
   * Several rotations in one statement: the stamps in key order (as in `stampMany`), then the
   * successors of the stamps that took (`i` names each rotation).
   */
  private async rotateMany(rotations: Rotation[]): Promise<boolean[]> {
    const branches = rotations.map((_, i) => `s${i} AS (${this.stampSql(4 * i)} RETURNING ${i} AS i)`);
    const { list, params } = valuesList(
      rotations.map((r, i) => [...PgModels.upsertValues(r.row), i]),
      [...UPSERT_TYPES, 'int'],
      4 * rotations.length,
    );
    const { rows } = await this.pool.query<{ model: string; id: string }>(
      prepared(
        `WITH ${branches.join(',\n')},
         stamped AS (${rotations.map((_, i) => `SELECT i FROM s${i}`).join(' UNION ALL ')})
         ${this.upsertSql(
           `SELECT v.model, v.id, v.payload, v.grant_id, v.uid, v.user_code, v.expires_at
            FROM ${list} AS v(model, id, payload, grant_id, uid, user_code, expires_at, i)
            WHERE v.i IN (SELECT i FROM stamped)`,
         )}
         RETURNING model, id`,
        [...rotations.flatMap((r) => PgModels.stampParams(r.stamp)), ...params],
      ),
    );
    return inInputOrder(
      rotations.map((r) => r.row),
      rows,
    ).map((row) => row !== undefined);
  }

  async destroy(model: string, id: string) {
    this.dropReadAhead(model, id);
    await repeatable(this.pool, prepared(`DELETE FROM ${this.q}.oidc_models WHERE model = $1 AND id = $2`, [model, id]));
    this.dropReadAhead(model, id);
  }

  async revokeByGrantId(grantId: string) {
    this.grants.drop(grantId);
    this.#sources.clear(); // the grant's codes and tokens are not known by id here
    await repeatable(this.pool, prepared(`DELETE FROM ${this.q}.oidc_models WHERE grant_id = $1`, [grantId]));
    this.grants.drop(grantId);
    this.#sources.clear();
  }
}
