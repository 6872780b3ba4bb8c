/** Account rules shared by every backend: username normalisation and input checks. */
import { StorageError } from './errors.js';
import type { AccountRecord } from './types.js';

/** Usernames compare case-insensitively (and independently of Unicode composition). */
export function usernameKey(username: string): string {
  return username.normalize('NFKC').toLowerCase();
}

export function upstreamIdentityKey(issuer: string, subject: string): string {
  return `${issuer} ${subject}`;
}

export function checkAccountInput(account: Partial<Pick<AccountRecord, 'id' | 'username'>>): void {
  if (account.id !== undefined && (typeof account.id !== 'string' || account.id === '')) {
    throw new StorageError('account id must be a non-empty string', 'invalid_input');
  }
  if (account.username !== undefined && (typeof account.username !== 'string' || account.username.trim() === '')) {
    throw new StorageError('username must be a non-empty string', 'invalid_input');
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

type AccountPatch = Partial<Omit<AccountRecord, 'id' | 'createdAt' | 'updatedAt'>>;

/** Fills the optional members the way every backend returns them. */
export function newAccount(account: Omit<AccountRecord, 'createdAt' | 'updatedAt'>, nowSeconds: number): AccountRecord {
  checkAccountInput(account);
  const record: AccountRecord = {
    id: account.id,
    username: account.username,
    passwordHash: account.passwordHash ?? null,
    disabled: Boolean(account.disabled),
    upstreamIdentities: [...(account.upstreamIdentities ?? [])],
    createdAt: nowSeconds,
    updatedAt: nowSeconds,
  };
  if (account.displayName !== undefined) record.displayName = account.displayName;
  if (duplicateIdentities(record.upstreamIdentities ?? [])) throw conflict('upstream identity');
  return record;
}

/** Applies a patch: members set to `undefined` are left as they are. */
export function patchAccount(existing: AccountRecord, patch: AccountPatch, nowSeconds: number): AccountRecord {
  checkAccountInput(patch);
  const record: AccountRecord = { ...existing, upstreamIdentities: [...(existing.upstreamIdentities ?? [])], updatedAt: nowSeconds };
  if (patch.username !== undefined) record.username = patch.username;
  if (patch.passwordHash !== undefined) record.passwordHash = patch.passwordHash;
  if (patch.displayName !== undefined) record.displayName = patch.displayName;
  if (patch.disabled !== undefined) record.disabled = Boolean(patch.disabled);
  if (patch.upstreamIdentities !== undefined) record.upstreamIdentities = [...patch.upstreamIdentities];
  if (duplicateIdentities(record.upstreamIdentities ?? [])) throw conflict('upstream identity');
  return record;
}

export interface AccountRow {
  id: string;
  username: string;
  password_hash: string | null;
  display_name: string | null;
  disabled: boolean | number;
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
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
  if (row.display_name !== null) record.displayName = row.display_name;
  return record;
}
