import { displaySafeText } from '@mcp-auth-kit/protocol';
import type { AccountRecord } from '../storage/types.js';

/**
 * The name an account is shown by (consent and account pages, the ID Token's `name` claim): its
 * display name through the one display rule (`displaySafeText`: any white space run one space,
 * invisibles and combining-mark stacks dropped, bounded), else its username. A display name may
 * come from an operator's `--display-name`, an older version or a row written by hand, so the
 * rule holds where it is shown, not only where upstream names are stored.
 */
export function shownAccountName(account: Pick<AccountRecord, 'displayName' | 'username'>): string {
  return displaySafeText(account.displayName) ?? account.username;
}

/**
 * The name a client is shown by on the login, consent and account pages: its registered
 * `client_name` (chosen by whoever registered it) through the same display rule, else its
 * `client_id`. Padding of wide spaces or a mark stack cannot push "unverified" or the rest of the
 * sentence away.
 */
export function shownClientName(clientName: unknown, clientId: string): string {
  return displaySafeText(clientName) ?? clientId;
}
