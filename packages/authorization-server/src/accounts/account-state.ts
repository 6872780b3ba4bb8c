/**
 * Whether an account may act at all: it exists, is not disabled, and may sign in on this server
 * (account-origin.ts `signInRefusal`: the demo account never does in production). One rule for
 * `findAccount` (no live token for anyone else), introspection (RFC 7662 §2.2 `active`), the
 * account page, the connect pages and the token exchange.
 */
import { signInRefusal } from './account-origin.js';
import type { AccountRecord, Store } from '../storage/types.js';

export async function usableAccount(store: Store, accountId: string, server: { production?: boolean }): Promise<AccountRecord | undefined> {
  const account = await store.accounts.findById(accountId);
  return account && !account.disabled && !signInRefusal(account, server) ? account : undefined;
}
