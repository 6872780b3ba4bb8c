import { randomUUID } from 'node:crypto';
import type { AccountRecord, Store } from './storage/types.js';
import type { UserSeed } from './config.js';
import { hashPassword } from './passwords.js';

/** Creates the configured users that do not exist yet (existing ones are left untouched). */
export async function seedUsers(store: Store, users: readonly UserSeed[]): Promise<void> {
  for (const user of users) {
    if (await store.accounts.findByUsername(user.username)) continue;
    await store.accounts.create({
      id: randomUUID(),
      username: user.username,
      passwordHash: await hashPassword(user.password),
      displayName: user.displayName,
      disabled: false,
    });
  }
}

/** The dev auto-login account: found by username, or created without a password. */
export async function ensureAccount(store: Store, username: string): Promise<AccountRecord> {
  const existing = await store.accounts.findByUsername(username);
  if (existing) return existing;
  return store.accounts.create({ id: randomUUID(), username, passwordHash: null, disabled: false });
}
