/**
 * Who may adopt an existing account (issue 40 item 1, account pre-hijack). An identity that
 * arrives from outside (an ID-JAG, an upstream sign-in) may take over an account it did not
 * create only when the operator made that account, or when the account came from that same
 * trust source. An account someone created for themselves through another source (an upstream
 * sign-up, another IdP's just-in-time account) is theirs alone: its username proves nothing,
 * since its creator chose it. The README's "Account linking" matrix lists every case.
 */
import type { AccountRecord, AccountSource } from './storage/types.js';

export const upstreamSource = (issuer: string): AccountSource => `upstream:${issuer}`;
export const idJagSource = (issuer: string): AccountSource => `id-jag:${issuer}`;

/** Whether `source` (the incoming identity's trust source) may adopt `account` on a verified attribute. */
export function mayAdopt(account: Pick<AccountRecord, 'source'>, source: AccountSource): boolean {
  return account.source === 'operator' || account.source === source;
}
