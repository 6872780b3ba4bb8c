/**
 * The local account of an ID-JAG's user (MCP enterprise-managed authorization, "Handle Account
 * Linking"): the (`iss`, `sub`) pair is the stable key, kept in the account's upstream identities
 * (the same list upstream sign-in and `admin user link` use, so the admin tool shows it). With
 * `accountMatch: 'email'`, a first ID-JAG may link an existing account whose username is the
 * user's verified e-mail address (accounts made before the IdP was configured); otherwise, and
 * unless the operator turned it off, an account is created just in time.
 */
import { randomUUID } from 'node:crypto';
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

/** The verified e-mail address the IdP may vouch for, lower-cased; undefined otherwise. */
export function vouchedEmail(idp: TrustedIdp, claims: IdJagClaims): string | undefined {
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1 || /\s/.test(email)) return undefined;
  const verified = idp.config.verifiedEmail === 'trusted' || claims.email_verified === true;
  if (!verified) return undefined;
  const domains = idp.config.emailDomains?.map((d) => d.toLowerCase());
  if (domains && !domains.includes(email.slice(at + 1))) return undefined;
  return email;
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 100) : undefined);

async function create(store: Store, idp: TrustedIdp, claims: IdJagClaims, email: string | undefined): Promise<AccountRecord> {
  const identity = `${claims.iss} ${claims.sub}`;
  const base = email ?? `${idp.name}:${claims.sub}`.slice(0, 100);
  // A username already taken is never linked here: the new account gets a distinct one.
  for (const username of [base, `${base}-${randomUUID().slice(0, 8)}`]) {
    if (await store.accounts.findByUsername(username)) continue;
    try {
      return await store.accounts.create({
        id: randomUUID(),
        username,
        passwordHash: null,
        displayName: text(claims.name),
        disabled: false,
        upstreamIdentities: [identity],
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
    if (existing) {
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
