/**
 * The local account of an ID-JAG's user (MCP enterprise-managed authorization, "Handle Account
 * Linking"): the (`iss`, `sub`) pair is the stable key, kept in the account's upstream identities
 * (the same list upstream sign-in and `admin user link` use, so the admin tool shows it). With
 * `accountMatch: 'email'`, a first ID-JAG may link an existing account whose username is the
 * user's verified e-mail address (compared by the canonical identity key) when the operator made
 * that account or this IdP did (`mayAdopt`): an account someone signed up for elsewhere under
 * that name is never adopted. Otherwise, and unless the operator turned it off, an account is
 * created just in time.
 */
import { createHash, randomUUID } from 'node:crypto';
import { displaySafeText, identityKey, isUsername } from '@mcp-auth-kit/protocol';
import { idJagSource, mayAdopt } from '../../accounts/account-origin.js';
import { usernameChoices } from '../../accounts/account-names.js';
import { StorageError } from '../../storage/errors.js';
import type { AccountRecord, Store } from '../../storage/types.js';
import type { TrustedIdp } from './idp-keys.js';
import { refuse } from './refusal.js';
import type { IdJagClaims } from './verify.js';

export interface ResolvedAccount {
  account: AccountRecord;
  /** How the account was found: `subject` (already linked), `email` (linked now), `created` (just in time). */
  via: 'subject' | 'email' | 'created';
}

/**
 * The verified e-mail address the IdP may vouch for, as its canonical key; undefined otherwise.
 * Only an address already in canonical display-safe form counts (a full-width or invisible
 * spelling is a different string the IdP verified, not this address).
 */
export function vouchedEmail(idp: TrustedIdp, claims: IdJagClaims): string | undefined {
  if (!isUsername(claims.email)) return undefined;
  const email = identityKey(claims.email);
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1 || /\s/.test(email) || !isUsername(email)) return undefined;
  const verified = idp.config.verifiedEmail === 'trusted' || claims.email_verified === true;
  if (!verified) return undefined;
  const domains = idp.config.emailDomains?.map(identityKey);
  if (domains && !domains.includes(email.slice(at + 1))) return undefined;
  return email;
}

async function create(store: Store, idp: TrustedIdp, claims: IdJagClaims, email: string | undefined): Promise<AccountRecord> {
  const identity = `${claims.iss} ${claims.sub}`;
  const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 12);
  // A username already taken is never linked here: the new account gets a distinct one.
  const usernames = usernameChoices(
    [email, `${idp.name}:${claims.sub}`, `${idp.name}:${hash}`, `id-jag-${hash}`],
    [randomUUID().slice(0, 8)],
  );
  for (const username of usernames) {
    if (await store.accounts.findByUsername(username)) continue;
    try {
      return await store.accounts.create({
        id: randomUUID(),
        username,
        passwordHash: null,
        displayName: displaySafeText(claims.name),
        disabled: false,
        upstreamIdentities: [identity],
        source: idJagSource(claims.iss),
      });
    } catch (err) {
      if (!(err instanceof StorageError && err.code === 'conflict')) throw err;
      // Another instance may have created this user's account meanwhile.
      const raced = await store.accounts.findByUpstreamIdentity(claims.iss, claims.sub);
      if (raced) return raced;
    }
  }
  throw new Error('could not choose a username for the ID-JAG account');
}

/** Finds, links or creates the account; refuses (invalid_grant) when none may be had. */
export async function resolveAccount(store: Store, idp: TrustedIdp, claims: IdJagClaims): Promise<ResolvedAccount> {
  const linked = await store.accounts.findByUpstreamIdentity(claims.iss, claims.sub);
  if (linked) return { account: linked, via: 'subject' };
  const email = vouchedEmail(idp, claims);
  if (idp.config.accountMatch === 'email' && email) {
    const existing = await store.accounts.findByUsername(email);
    // Not adoptable (someone else's sign-up under this name): this user gets an account of their own.
    if (existing && mayAdopt(existing, idJagSource(claims.iss))) {
      if (existing.disabled) return { account: existing, via: 'email' };
      const identities = [...(existing.upstreamIdentities ?? []), `${claims.iss} ${claims.sub}`];
      return { account: await store.accounts.update(existing.id, { upstreamIdentities: identities }), via: 'email' };
    }
  }
  if (idp.config.createAccounts === false) {
    return refuse('invalid_grant', 'no_account', 'the user has no account at this server and accounts are not created on first use');
  }
  return { account: await create(store, idp, claims, idp.config.accountMatch === 'email' ? email : undefined), via: 'created' };
}
