/** Audit-log rules shared by every backend: input checks, the query's filter, the row ↔ record mapping. */
import { StorageError } from './errors.js';
import type { AuditQuery, AuditRecord, NewAuditRecord } from './types.js';

export const AUDIT_DEFAULT_LIMIT = 100;
export const AUDIT_MAX_LIMIT = 1000;

export interface AuditRow {
  id: number | string;
  at: number | string;
  event: string;
  actor: string | null;
  account_id: string | null;
  client_id: string | null;
  fields: string;
}

const optionalString = (v: unknown) => v === undefined || typeof v === 'string';

/** Refuses (`invalid_input`) what no caller of ours writes: no event name, a fractional time, fields that are not an object. */
export function checkAuditInput(r: NewAuditRecord): void {
  const fail = (what: string) => {
    throw new StorageError(`audit record ${what}`, 'invalid_input');
  };
  if (typeof r.event !== 'string' || r.event === '') fail('event must be a non-empty string');
  if (!Number.isSafeInteger(r.at) || r.at < 0) fail('at must be an integer (epoch ms)');
  if (!optionalString(r.actor) || !optionalString(r.accountId) || !optionalString(r.clientId))
    fail('actor, accountId, clientId must be strings');
  if (r.fields === null || typeof r.fields !== 'object' || Array.isArray(r.fields)) fail('fields must be an object');
}

/** The search's page size: default 100, at most 1000. */
export function auditLimit(query: AuditQuery): number {
  const limit = query.limit ?? AUDIT_DEFAULT_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new StorageError('audit limit must be a positive integer', 'invalid_input');
  return Math.min(limit, AUDIT_MAX_LIMIT);
}

/** A `before` cursor as the integer id it names (ids are decimal strings). */
export function auditCursor(query: AuditQuery): number | undefined {
  if (query.before === undefined) return undefined;
  if (!/^\d{1,15}$/.test(query.before)) throw new StorageError('audit cursor must be a record id', 'invalid_input');
  return Number(query.before);
}

/** Whether a record matches the query (the memory backend; the SQL ones use {@link auditWhere}). */
export function auditMatches(r: AuditRecord, query: AuditQuery): boolean {
  const cursor = auditCursor(query);
  return (
    (query.accountId === undefined || r.accountId === query.accountId) &&
    (query.clientId === undefined || r.clientId === query.clientId) &&
    (query.event === undefined || r.event === query.event) &&
    (query.actor === undefined || r.actor === query.actor) &&
    (query.from === undefined || r.at >= query.from) &&
    (query.to === undefined || r.at < query.to) &&
    (cursor === undefined || Number(r.id) < cursor)
  );
}

/** The SQL condition of a query, with `param(i)` naming the i-th (1-based) value (`?` or `$i`). */
export function auditWhere(query: AuditQuery, param: (i: number) => string): { where: string; values: unknown[] } {
  const parts: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    parts.push(`${sql} ${param(values.length)}`);
  };
  if (query.accountId !== undefined) add('account_id =', query.accountId);
  if (query.clientId !== undefined) add('client_id =', query.clientId);
  if (query.event !== undefined) add('event =', query.event);
  if (query.actor !== undefined) add('actor =', query.actor);
  if (query.from !== undefined) add('at >=', query.from);
  if (query.to !== undefined) add('at <', query.to);
  const cursor = auditCursor(query);
  if (cursor !== undefined) add('id <', cursor);
  return { where: parts.length ? `WHERE ${parts.join(' AND ')}` : '', values };
}

export function auditFromRow(row: AuditRow): AuditRecord {
  return {
    id: String(row.id),
    at: Number(row.at),
    event: row.event,
    ...(row.actor !== null && { actor: row.actor }),
    ...(row.account_id !== null && { accountId: row.account_id }),
    ...(row.client_id !== null && { clientId: row.client_id }),
    fields: JSON.parse(row.fields) as Record<string, unknown>,
  };
}

/** Column values in the order of {@link AUDIT_COLUMNS}. */
export function auditValues(r: NewAuditRecord): unknown[] {
  checkAuditInput(r);
  return [r.at, r.event, r.actor ?? null, r.accountId ?? null, r.clientId ?? null, JSON.stringify(r.fields)];
}

export const AUDIT_COLUMNS = 'at, event, actor, account_id, client_id, fields';
