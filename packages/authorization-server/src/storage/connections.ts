/** Connection rules shared by every backend: input checks and the row ↔ record mapping. */
import { StorageError } from './errors.js';
import type { ConnectionInput, ConnectionRecord } from './types.js';

/** A row as the SQL backends keep it: scopes space-separated, optional members NULL. */
export interface ConnectionRow {
  account_id: string;
  provider: string;
  key_id: string;
  sealed: string;
  scopes: string;
  provider_subject: string | null;
  expires_at: number | string | null;
  created_at: number | string;
  updated_at: number | string;
  version: number | string;
}

const nonEmpty = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** Refuses (`invalid_input`) what no caller of ours writes: empty keys, scopes with spaces, a fractional expiry. */
export function checkConnectionInput(c: ConnectionInput): void {
  const fail = (what: string) => {
    throw new StorageError(`connection ${what}`, 'invalid_input');
  };
  if (!nonEmpty(c.accountId) || !nonEmpty(c.provider)) fail('accountId and provider must be non-empty strings');
  if (!nonEmpty(c.keyId) || !nonEmpty(c.sealed)) fail('keyId and sealed must be non-empty strings');
  if (!Array.isArray(c.scopes) || c.scopes.some((s) => !nonEmpty(s) || /\s/.test(s))) fail('scopes must be scope tokens');
  if (c.expiresAt !== undefined && !Number.isSafeInteger(c.expiresAt)) fail('expiresAt must be an integer (epoch seconds)');
  if (c.providerSubject !== undefined && typeof c.providerSubject !== 'string') fail('providerSubject must be a string');
}

/** The record a write stores: the input's members only, the store's timestamps and version. */
export function connectionRecord(c: ConnectionInput, times: { createdAt: number; updatedAt: number; version: number }): ConnectionRecord {
  checkConnectionInput(c);
  return {
    accountId: c.accountId,
    provider: c.provider,
    keyId: c.keyId,
    sealed: c.sealed,
    scopes: [...c.scopes],
    ...(c.providerSubject !== undefined && { providerSubject: c.providerSubject }),
    ...(c.expiresAt !== undefined && { expiresAt: c.expiresAt }),
    ...times,
  };
}

/**
 * The record to write over `existing` (undefined: none yet), or undefined when a conditional write
 * (`version` given) finds another version there: the one rule of put and replace for every backend.
 */
export function nextConnection(
  input: ConnectionInput,
  existing: Pick<ConnectionRecord, 'createdAt' | 'version'> | undefined,
  version: number | undefined,
  nowSeconds: number,
): ConnectionRecord | undefined {
  if (version !== undefined && existing?.version !== version) return undefined;
  return connectionRecord(input, {
    createdAt: existing ? existing.createdAt : nowSeconds,
    updatedAt: nowSeconds,
    version: existing ? existing.version + 1 : 1,
  });
}

export function connectionFromRow(row: ConnectionRow): ConnectionRecord {
  return {
    accountId: row.account_id,
    provider: row.provider,
    keyId: row.key_id,
    sealed: row.sealed,
    scopes: row.scopes.split(' ').filter(Boolean),
    ...(row.provider_subject !== null && { providerSubject: row.provider_subject }),
    ...(row.expires_at !== null && { expiresAt: Number(row.expires_at) }),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    version: Number(row.version),
  };
}

/** The SQL backends' column values of a record, in the order of {@link CONNECTION_COLUMNS}. */
export function connectionValues(r: ConnectionRecord): unknown[] {
  return [
    r.accountId,
    r.provider,
    r.keyId,
    r.sealed,
    r.scopes.join(' '),
    r.providerSubject ?? null,
    r.expiresAt ?? null,
    r.createdAt,
    r.updatedAt,
    r.version,
  ];
}

export const CONNECTION_COLUMNS =
  'account_id, provider, key_id, sealed, scopes, provider_subject, expires_at, created_at, updated_at, version';
