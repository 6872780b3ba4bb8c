/** The audit log (`audit_log`): ids from AUTOINCREMENT, searched newest first. */
import { AUDIT_COLUMNS, type AuditRow, auditFromRow, auditLimit, auditValues, auditWhere } from '../audit-log.js';
import type { AuditQuery, AuditStore, NewAuditRecord } from '../types.js';
import { type Db, prepared } from './statements.js';

export class SqliteAudit implements AuditStore {
  constructor(private readonly db: Db) {}

  async append(input: NewAuditRecord) {
    const values = auditValues(input) as Array<string | number | null>;
    const row = prepared(this.db, `INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) RETURNING id, ${AUDIT_COLUMNS}`).get(
      ...values,
    ) as AuditRow;
    return auditFromRow(row);
  }

  async appendMany(records: readonly NewAuditRecord[]) {
    const rows = records.map((r) => auditValues(r) as Array<string | number | null>);
    const insert = prepared(this.db, `INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`);
    for (const values of rows) insert.run(...values);
    return rows.length;
  }

  async search(query: AuditQuery) {
    const limit = auditLimit(query);
    const { where, values } = auditWhere(query, () => '?');
    const rows = prepared(this.db, `SELECT id, ${AUDIT_COLUMNS} FROM audit_log ${where} ORDER BY id DESC LIMIT ?`).all(
      ...(values as Array<string | number>),
      limit,
    ) as AuditRow[];
    return rows.map(auditFromRow);
  }

  async purge(before: number) {
    return Number(prepared(this.db, 'DELETE FROM audit_log WHERE at < ?').run(before).changes);
  }
}
