/**
 * Who may adopt an existing account (issue 40 item 1, account pre-hijack). An identity that
 * arrives from outside (an ID-JAG, an upstream sign-in) may take over an account it did not
 * create only when the operator made that account, or when the account came from that same
 * trust source. An account someone created for themselves through another source (an upstream
 * sign-up, another IdP's just-in-time account) is theirs alone: its username proves nothing,
 * since its creator chose it. The README's "Account linking" matrix lists every case.
 */
import type { AccountRecord, AccountSource } from '../storage/types.js';

export const upstreamSource = (issuer: string): AccountSource => `upstream:${issuer}`;
export const idJagSource = (issuer: string): AccountSource => `id-jag:${issuer}`;

/** Whether `source` (the incoming identity's trust source) may adopt `account` on a verified attribute. */
export function mayAdopt(account: Pick<AccountRecord, 'source'>, source: AccountSource): boolean {
  return account.source === 'operator' || account.source === source;
}

/** The public demo account (`demo` / `demo-password`): a laptop's, never a production server's. */
export const DEMO_SOURCE: AccountSource = 'demo';

/**
 * Whether the operator's own paths (configured `users`, the dev auto-login user, the admin
 * tool's `set-password` and `enable`) may treat an existing account as theirs: only one the
 * operator made. A name someone else signed up under proves nothing (issue 40 finding 2: a
 * configured password or an admin reset would otherwise hand that person's account, upstream
 * identity still linked, to the user the operator meant).
 */
export function operatorOwns(account: Pick<AccountRecord, 'source'>): boolean {
  return account.source === 'operator';
}

/** Who made an account, in words for error messages. */
export function describeSource(source: AccountSource): string {
  if (source === 'operator') return 'the operator';
  if (source === 'demo') return 'the demo seeding (public password)';
  if (source === 'unknown') return 'an unknown source (an older row with an upstream identity)';
  if (source.startsWith('upstream:')) return `a self sign-up through the upstream provider ${source.slice('upstream:'.length)}`;
  return `a just-in-time ID-JAG account of ${source.slice('id-jag:'.length)}`;
}

/**
 * Why a sign-in to `account` is refused whatever the credential (password, upstream, dev
 * auto-login), or undefined: the demo account never signs in on a production server, checked
 * at each sign-in since a development instance may seed it into a shared store at any time.
 */
export function signInRefusal(account: Pick<AccountRecord, 'source'>, server: { production?: boolean }): 'demo-in-production' | undefined {
  return server.production && account.source === DEMO_SOURCE ? 'demo-in-production' : undefined;
}
