/** Account rules shared by every backend: the username key, input checks, the origin of a row. */
import { identityKey, usernameProblem } from '@mcp-auth-kit/protocol';
import { StorageError } from './errors.js';
import type { AccountPatch, AccountRecord, AccountSource, NewAccount } from './types.js';

/** The `username_key` column: the one canonical identity of @mcp-auth-kit/protocol. */
export const usernameKey: (username: string) => string = identityKey;

const SOURCE = /^(?:operator|unknown|demo|(?:upstream|id-jag):\S.*)$/s;

export function isAccountSource(value: unknown): value is AccountSource {
  return typeof value === 'string' && SOURCE.test(value);
}

export function upstreamIdentityKey(issuer: string, subject: string): string {
  return `${issuer} ${subject}`;
}

export function checkAccountInput(account: Partial<Pick<AccountRecord, 'id' | 'username'>>): void {
  if (account.id !== undefined && (typeof account.id !== 'string' || account.id === '')) {
    throw new StorageError('account id must be a non-empty string', 'invalid_input');
  }
  if (account.username !== undefined) {
    const problem = usernameProblem(account.username);
    if (problem) throw new StorageError(`username refused (${problem})`, 'invalid_input');
  }
}

export function duplicateIdentities(identities: readonly string[]): boolean {
  return new Set(identities).size !== identities.length;
}

export function conflict(what: string, cause?: unknown): StorageError {
  return new StorageError(`${what} already exists`, 'conflict', { cause });
}

export function notFound(): StorageError {
  return new StorageError('account not found', 'not_found');
}

/** Fills the optional members the way every backend returns them. */
export function newAccount(account: NewAccount, nowSeconds: number): AccountRecord {
  checkAccountInput(account);
  const source = account.source ?? 'operator';
  if (!isAccountSource(source))
    throw new StorageError('account source must be operator, demo, upstream:<issuer> or id-jag:<issuer>', 'invalid_input');
  const record: AccountRecord = {
    id: account.id,
    username: account.username,
    passwordHash: account.passwordHash ?? null,
    disabled: Boolean(account.disabled),
    upstreamIdentities: [...(account.upstreamIdentities ?? [])],
    source,
    admin: Boolean(account.admin),
    createdAt: nowSeconds,
    updatedAt: nowSeconds,
  };
  if (account.displayName !== undefined) record.displayName = account.displayName;
  if (duplicateIdentities(record.upstreamIdentities ?? [])) throw conflict('upstream identity');
  return record;
}

/** Applies a patch: members set to `undefined` are left as they are; `source` only ever becomes `operator`. */
export function patchAccount(existing: AccountRecord, patch: AccountPatch, nowSeconds: number): AccountRecord {
  checkAccountInput(patch);
  const record: AccountRecord = { ...existing, upstreamIdentities: [...(existing.upstreamIdentities ?? [])], updatedAt: nowSeconds };
  if (patch.username !== undefined) record.username = patch.username;
  if (patch.passwordHash !== undefined) record.passwordHash = patch.passwordHash;
  if (patch.displayName !== undefined) record.displayName = patch.displayName;
  if (patch.disabled !== undefined) record.disabled = Boolean(patch.disabled);
  if (patch.admin !== undefined) record.admin = Boolean(patch.admin);
  if (patch.upstreamIdentities !== undefined) record.upstreamIdentities = [...patch.upstreamIdentities];
  if (patch.source !== undefined) {
    if (patch.source !== 'operator') throw new StorageError('an account source only changes to operator (adoption)', 'invalid_input');
    record.source = 'operator';
  }
  if (duplicateIdentities(record.upstreamIdentities ?? [])) throw conflict('upstream identity');
  return record;
}

export interface AccountRow {
  id: string;
  username: string;
  password_hash: string | null;
  display_name: string | null;
  disabled: boolean | number;
  /** Absent in a row read before migration 4 ran (never after). */
  admin?: boolean | number;
  source: string;
  created_at: number | string;
  updated_at: number | string;
}

export function accountFromRow(row: AccountRow, identities: string[]): AccountRecord {
  const record: AccountRecord = {
    id: row.id,
    username: row.username,
    passwordHash: row.password_hash,
    disabled: Boolean(row.disabled),
    upstreamIdentities: identities,
    // A value this build does not know is treated as the least trusted origin.
    source: isAccountSource(row.source) ? row.source : 'unknown',
    admin: Boolean(row.admin),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
  if (row.display_name !== null) record.displayName = row.display_name;
  return record;
}
