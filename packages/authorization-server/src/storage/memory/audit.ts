/** The audit log in memory: records in insertion order, searched newest first. */
import { auditLimit, auditMatches, checkAuditInput } from '../audit-log.js';
import type { AuditQuery, AuditRecord, AuditStore, NewAuditRecord } from '../types.js';
import { copy } from './copy.js';

export class MemoryAudit implements AuditStore {
  private readonly rows: AuditRecord[] = [];
  private next = 1;

  async append(input: NewAuditRecord) {
    checkAuditInput(input);
    // the JSON copy drops members set to undefined, as a database gives them back
    const record: AuditRecord = { ...copy(input), id: String(this.next++) };
    this.rows.push(record);
    return copy(record);
  }

  async appendMany(records: readonly NewAuditRecord[]) {
    for (const r of records) checkAuditInput(r);
    for (const r of records) await this.append(r);
    return records.length;
  }

  async search(query: AuditQuery) {
    const limit = auditLimit(query);
    const out: AuditRecord[] = [];
    for (let i = this.rows.length - 1; i >= 0 && out.length < limit; i--) {
      const row = this.rows[i]!;
      if (auditMatches(row, query)) out.push(copy(row));
    }
    return out;
  }

  async purge(before: number) {
    const kept = this.rows.filter((r) => r.at >= before);
    const removed = this.rows.length - kept.length;
    this.rows.splice(0, this.rows.length, ...kept);
    return removed;
  }
}
