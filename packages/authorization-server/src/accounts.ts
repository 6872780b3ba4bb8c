import { randomUUID } from 'node:crypto';
import type { AccountRecord, NewAccount, Store } from './storage/types.js';
import { StorageError } from './storage/errors.js';
import type { UserSeed } from './config/types.js';
import { hashPassword } from './passwords.js';

/** Another instance starting at the same time may create the same username first. */
async function createOrFind(store: Store, account: NewAccount): Promise<AccountRecord> {
  try {
    return await store.accounts.create(account);
  } catch (err) {
    if (err instanceof StorageError && err.code === 'conflict') {
      const existing = await store.accounts.findByUsername(account.username);
      if (existing) return existing;
    }
    throw err;
  }
}

/** Creates the configured users that do not exist yet (existing ones are left untouched). */
export async function seedUsers(store: Store, users: readonly UserSeed[]): Promise<void> {
  for (const user of users) {
    if (await store.accounts.findByUsername(user.username)) continue;
    await createOrFind(store, {
      id: randomUUID(),
      username: user.username,
      passwordHash: await hashPassword(user.password),
      displayName: user.displayName,
      disabled: false,
      source: 'operator',
    });
  }
}

/** The dev auto-login account: found by username, or created without a password. */
export async function ensureAccount(store: Store, username: string): Promise<AccountRecord> {
  const existing = await store.accounts.findByUsername(username);
  if (existing) return existing;
  return createOrFind(store, { id: randomUUID(), username, passwordHash: null, disabled: false, source: 'operator' });
}
