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
