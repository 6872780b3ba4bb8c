/** oidc-provider's models (grants, codes, tokens, sessions …) in `oidc_models`. */
import type { AdapterPayload } from 'oidc-provider';
import type { IndexedField, ModelBackend, ModelRow, Stamp } from '../model-rows.js';
import type { CommitGroup } from './commit-group.js';
import { type Db, LIVE, prepared } from './statements.js';

export class SqliteModels implements ModelBackend {
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

  async list(model: string, now: number) {
    const rows = prepared(this.db, `SELECT id, payload FROM oidc_models WHERE model = @model AND ${LIVE} ORDER BY id`).all({
      model,
      now,
    }) as Array<{
      id: string;
      payload: string;
    }>;
    return rows.map((r) => ({ id: r.id, payload: JSON.parse(r.payload) as AdapterPayload }));
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

  /**
   * A refresh token's stamp and its successor's row in one transaction: both or neither, and the
   * successor only when this stamp took (of two rotations of one token, the second saves nothing).
   */
  async rotate(stamp: Stamp, row: ModelRow): Promise<boolean> {
    const params = SqliteModels.upsertParams(row);
    return this.writes.submit(() =>
      this.db.transaction(() => {
        if (!this.stampNow(stamp)) return false;
        this.upsertNow(params);
        return true;
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
