/** The test AS's accounts: `sub` is the username (readable expectations), passwords known to the helpers. */
import { randomBytes } from 'node:crypto';
import { hashPassword, type Store } from '@mcp-auth-kit/authorization-server';
import { identityKey } from '@mcp-auth-kit/protocol';
import type { TestUser } from './test-authorization-server-options.js';

export interface TestAccounts {
  /** Creates the account on first use (a subject the options did not list). */
  ensure(username: string): Promise<void>;
  /** The password of a user (given, or generated), undefined for an unknown one. */
  password(username: string): string | undefined;
}

/** Creates the listed users in `store`, each with its given password or a random one. */
export async function createTestAccounts(store: Store, users: readonly TestUser[]): Promise<TestAccounts> {
  const passwords = new Map(users.map((u) => [identityKey(u.username), u.password ?? randomBytes(12).toString('base64url')]));
  for (const user of users) {
    if (await store.accounts.findByUsername(user.username)) continue;
    await store.accounts.create({
      id: user.username,
      username: user.username,
      passwordHash: await hashPassword(passwords.get(identityKey(user.username))!),
      displayName: user.displayName,
      disabled: false,
    });
  }
  return {
    async ensure(username) {
      if (await store.accounts.findByUsername(username)) return;
      const password = randomBytes(12).toString('base64url');
      passwords.set(identityKey(username), password);
      await store.accounts.create({ id: username, username, passwordHash: await hashPassword(password), disabled: false });
    },
    password: (username) => passwords.get(identityKey(username)),
  };
}
