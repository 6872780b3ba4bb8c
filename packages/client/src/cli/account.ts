import type { SignedInAccount } from '../client/signed-in-account.js';

/** How the CLI names a signed-in account: the display name when there is one, and always the `sub`. */
export function accountLabel(account: SignedInAccount): string {
  return account.name ? `${account.name} (sub ${account.sub})` : `sub ${account.sub}`;
}
