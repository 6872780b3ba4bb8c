/**
 * The demo account (`demo` / `demo-password`, printed in the README and the start-up banner)
 * is for a laptop. A store that went from development to a server keeps it: seeding is off
 * there, but the account and its public password stay. Outside development the server
 * refuses to start while that account still signs in with that password.
 */
import { verifyPassword, type Store } from '@mcp-auth-kit/authorization-server';

export const DEMO_USER = { username: 'demo', password: 'demo-password', displayName: 'Demo User' };

// A command that exists in this repository (npx would fetch a stranger's package by a made-up name).
const ADMIN = 'npm run admin --';

/** Empty unless the store holds an enabled `demo` account whose password is the public one. */
export async function demoAccountProblems(store: Store, why: string): Promise<string[]> {
  const account = await store.accounts.findByUsername(DEMO_USER.username);
  if (!account || account.disabled || !account.passwordHash) return [];
  if (!(await verifyPassword(DEMO_USER.password, account.passwordHash))) return [];
  return [
    `account "${account.username}" still signs in with the public demo password (refused ${why}): ` +
      `change it with \`${ADMIN} user set-password ${account.username}\` (it asks for the new password; or the first line of stdin, or AS_ADMIN_PASSWORD) ` +
      `or disable it with \`${ADMIN} user disable ${account.username}\`, using the same DATA_DIR / DATABASE_URL, then start again`,
  ];
}
