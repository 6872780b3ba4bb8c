import { randomUUID } from 'node:crypto';
import { ConfigError } from '@mcp-auth-kit/protocol';
import type { AccountRecord, AccountSource, NewAccount, Store } from '../storage/types.js';
import { StorageError } from '../storage/errors.js';
import type { UserSeed } from '../config/types.js';
import { hashPassword } from './passwords.js';
import { DEMO_SOURCE, describeSource, operatorOwns } from './account-origin.js';

/** How to run the admin tool, as named in messages (a command that exists in this repository). */
const ADMIN = 'npm run admin --';

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

/**
 * The one rule for every operator path that names an account (configured `users`, the demo
 * seed, the dev auto-login user): an existing account is kept only when it came from the same
 * place (`operator`, or `demo` for the demo seed); any other is someone's own account, and the
 * start is refused with the conflict and the fix. Undefined when the account may be used.
 */
export function seedConflict(existing: AccountRecord, want: AccountSource, setting: string): string | undefined {
  if (operatorOwns(existing) || existing.source === want) return undefined;
  return (
    `${setting}: the username "${existing.username}" is taken by an account made by ${describeSource(existing.source)}, ` +
    'not by the operator; it is not adopted silently (its creator chose that name and can still sign in to it). ' +
    `Choose another username, or adopt that account with \`${ADMIN} user set-password ${existing.username} --adopt\` ` +
    '(it unlinks its upstream identities, revokes its grants and sets your password), then start again'
  );
}

/** kv marker written by a production server at start-up: the store serves production. */
export const PRODUCTION_MARK = { namespace: 'store-marks', key: 'production' } as const;
const MARK_TTL = 10 * 365 * 24 * 3600;

/** Marks the store as used by a production server (no development instance seeds the demo account into it). */
export async function markProductionStore(store: Store, issuer: string): Promise<void> {
  await store.kv.set(PRODUCTION_MARK.namespace, PRODUCTION_MARK.key, { issuer, at: Math.floor(Date.now() / 1000) }, MARK_TTL);
}

/**
 * Creates the configured users that do not exist yet. An existing name is kept only when the
 * operator made it (see {@link seedConflict}); a seed with `source: 'demo'` (the public demo
 * account) is refused on a store a production server has marked.
 */
export async function seedUsers(store: Store, users: readonly UserSeed[]): Promise<void> {
  const problems: string[] = [];
  for (const user of users) {
    const source: AccountSource = user.source === 'demo' ? DEMO_SOURCE : 'operator';
    const setting = source === DEMO_SOURCE ? `the demo account "${user.username}"` : 'users (configuration)';
    if (source === DEMO_SOURCE) {
      const mark = await store.kv.get<{ issuer?: string }>(PRODUCTION_MARK.namespace, PRODUCTION_MARK.key);
      if (mark) {
        problems.push(
          `${setting} (public password) is not seeded: this store is used by the production server ${String(mark.issuer ?? '')}; ` +
            'use a store of your own for development (another DATABASE_URL / DATA_DIR), or turn the demo account off (AS_DEMO_USER=0)',
        );
        continue;
      }
    }
    const existing = await store.accounts.findByUsername(user.username);
    if (existing) {
      const conflict = seedConflict(existing, source, setting);
      if (conflict) problems.push(conflict);
      continue;
    }
    const made = await createOrFind(store, {
      id: randomUUID(),
      username: user.username,
      passwordHash: await hashPassword(user.password),
      displayName: user.displayName,
      disabled: false,
      source,
    });
    const raced = seedConflict(made, source, setting);
    if (raced) problems.push(raced);
  }
  if (problems.length) throw new ConfigError(problems, 'authorization server');
}

/** The dev auto-login account: found by username (made by the operator), or created without a password. */
export async function ensureAccount(store: Store, username: string): Promise<AccountRecord> {
  const existing =
    (await store.accounts.findByUsername(username)) ??
    (await createOrFind(store, { id: randomUUID(), username, passwordHash: null, disabled: false, source: 'operator' }));
  // The demo account is a development account too (auto-login is refused in production).
  const conflict = existing.source === DEMO_SOURCE ? undefined : seedConflict(existing, 'operator', 'devAutoLogin (DEV_AUTO_LOGIN)');
  if (conflict) throw new ConfigError([conflict], 'authorization server');
  return existing;
}
