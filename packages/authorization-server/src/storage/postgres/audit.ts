/** The audit log (`audit_log`): ids from BIGSERIAL, searched newest first. */
import type { Pool } from 'pg';
import { AUDIT_COLUMNS, type AuditRow, auditFromRow, auditLimit, auditValues, auditWhere } from '../audit-log.js';
import type { AuditQuery, AuditStore, NewAuditRecord } from '../types.js';
import { repeatable } from './statements.js';

export class PgAudit implements AuditStore {
  constructor(
    private readonly pool: Pool,
    private readonly q: string,
  ) {}

  async append(input: NewAuditRecord) {
    // not `repeatable`: a retried INSERT after a lost answer could write the event twice
    const { rows } = await this.pool.query<AuditRow>(
      `INSERT INTO ${this.q}.audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, ${AUDIT_COLUMNS}`,
      auditValues(input),
    );
    return auditFromRow(rows[0]!);
  }

  async appendMany(records: readonly NewAuditRecord[]) {
    if (records.length === 0) return 0;
    const values = records.flatMap((r) => auditValues(r));
    const width = values.length / records.length;
    const rows = records.map((_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(', ')})`);
    // one statement for the whole batch; not `repeatable`, as for append
    const { rowCount } = await this.pool.query(`INSERT INTO ${this.q}.audit_log (${AUDIT_COLUMNS}) VALUES ${rows.join(', ')}`, values);
    return rowCount ?? records.length;
  }

  async search(query: AuditQuery) {
    const limit = auditLimit(query);
    const { where, values } = auditWhere(query, (i) => `$${i}`);
    const { rows } = await repeatable<AuditRow>(
      this.pool,
      `SELECT id, ${AUDIT_COLUMNS} FROM ${this.q}.audit_log ${where} ORDER BY id DESC LIMIT $${values.length + 1}`,
      [...values, limit],
    );
    return rows.map(auditFromRow);
  }

  async purge(before: number) {
    const result = await repeatable(this.pool, `DELETE FROM ${this.q}.audit_log WHERE at < $1`, [before]);
    return result.rowCount ?? 0;
  }
}
