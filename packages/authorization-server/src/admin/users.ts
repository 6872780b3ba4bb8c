/** Users for the console and the admin tool: views without the password hash, and the account changes. */
import { randomUUID } from 'node:crypto';
import { displaySafeText, usernameProblem } from '@mcp-auth-kit/protocol';
import { revokeAccountGrants } from '../interactions/remembered-grants.js';
import { hashPassword } from '../accounts/passwords.js';
import type { AccountRecord, Store } from '../storage/types.js';
import type { AdminContext } from './context.js';
import { type AdminService, AdminServiceError, type NewUser, type UserView } from './types.js';

export const MIN_PASSWORD_LENGTH = 8;

export function userView(a: AccountRecord): UserView {
  return {
    id: a.id,
    username: a.username,
    ...(a.displayName !== undefined && { displayName: a.displayName }),
    disabled: a.disabled,
    admin: Boolean(a.admin),
    source: a.source,
    linkedIdentities: [...(a.upstreamIdentities ?? [])],
    hasPassword: a.passwordHash !== null,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

/** Case-insensitive match on username, display name, sub or a linked identity. */
export function matchesSearch(a: AccountRecord, search: string): boolean {
  const needle = search.trim().toLowerCase();
  if (!needle) return true;
  return [a.username, a.displayName ?? '', a.id, ...(a.upstreamIdentities ?? [])].some((v) => v.toLowerCase().includes(needle));
}

export async function findAccount(store: Store, idOrUsername: string): Promise<AccountRecord | undefined> {
  return (await store.accounts.findById(idOrUsername)) ?? (await store.accounts.findByUsername(idOrUsername));
}

export async function requireAccount(store: Store, accountId: string): Promise<AccountRecord> {
  const account = await store.accounts.findById(accountId);
  if (!account) throw new AdminServiceError('no such user', 'not_found');
  return account;
}

/** A new local account, checked as the admin tool always did: canonical name, display-safe name, password length. */
export async function createAccount(store: Store, user: NewUser): Promise<AccountRecord> {
  const problem = usernameProblem(user.username);
  if (problem) throw new AdminServiceError(`username refused (${problem})`, 'invalid_request');
  if (await store.accounts.findByUsername(user.username))
    throw new AdminServiceError('that username already exists; nothing changed', 'conflict');
  const displayName = user.displayName === undefined ? undefined : displaySafeText(user.displayName);
  if (user.displayName !== undefined && displayName === undefined)
    throw new AdminServiceError('display name refused: nothing visible is left', 'invalid_request');
  if (user.password !== undefined && user.password.length < MIN_PASSWORD_LENGTH)
    throw new AdminServiceError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters; nothing changed`, 'invalid_request');
  return store.accounts.create({
    id: randomUUID(),
    username: user.username,
    passwordHash: user.password === undefined ? null : await hashPassword(user.password),
    displayName,
    disabled: false,
    admin: Boolean(user.admin),
  });
}

/**
 * Disabling: the account stops (findAccount and introspection refuse it: account-state.ts), every
 * grant is revoked through the store's revocation path (the Redis signal hears of it; re-enabling
 * revives no refresh token), and its third-party connections are deleted.
 */
export async function disableAccount(
  store: Store,
  account: AccountRecord,
): Promise<{ revoked: string[]; disconnected: number; account: AccountRecord }> {
  const updated = await store.accounts.update(account.id, { disabled: true });
  const revoked = await revokeAccountGrants(store, account.id);
  const disconnected = await store.connections.deleteAccount(account.id);
  return { revoked, disconnected, account: updated };
}

/** Links or unlinks `<issuer> <subject>`; an identity already linked to another account is refused. */
export async function changeIdentity(
  store: Store,
  account: AccountRecord,
  issuer: string,
  subject: string,
  link: boolean,
): Promise<AccountRecord> {
  if (!issuer || !subject || /\s/.test(issuer) || /\s/.test(subject))
    throw new AdminServiceError('an issuer and a subject without spaces are needed', 'invalid_request');
  const identity = `${issuer} ${subject}`;
  const current = account.upstreamIdentities ?? [];
  if (!link) return store.accounts.update(account.id, { upstreamIdentities: current.filter((i) => i !== identity) });
  const owner = await store.accounts.findByUpstreamIdentity(issuer, subject);
  if (owner && owner.id !== account.id)
    throw new AdminServiceError(`that identity is already linked to "${owner.username}"; nothing changed`, 'conflict');
  return current.includes(identity) ? account : store.accounts.update(account.id, { upstreamIdentities: [...current, identity] });
}

type UserOperations = Pick<
  AdminService,
  'listUsers' | 'getUser' | 'createUser' | 'setUserDisabled' | 'setUserAdmin' | 'linkIdentity' | 'unlinkIdentity' | 'userConnections'
>;

export function userOperations({ store, record }: AdminContext): UserOperations {
  const requireUser = (accountId: string) => requireAccount(store, accountId);
  return {
    async listUsers(search) {
      return (await store.accounts.list()).filter((a) => search === undefined || matchesSearch(a, search)).map(userView);
    },
    async getUser(idOrUsername) {
      const account = await findAccount(store, idOrUsername);
      return account && userView(account);
    },
    async createUser(actor, user) {
      const account = await createAccount(store, user);
      await record(actor, 'account.created', { account_id: account.id, username: account.username, admin: Boolean(account.admin) });
      return userView(account);
    },
    async setUserDisabled(actor, accountId, disabled) {
      const account = await requireUser(accountId);
      if (!disabled) {
        const enabled = await store.accounts.update(account.id, { disabled: false });
        await record(actor, 'account.updated', { account_id: account.id, disabled: false });
        return { user: userView(enabled), revokedGrants: [], deletedConnections: 0 };
      }
      const done = await disableAccount(store, account);
      await record(actor, 'account.disabled', {
        account_id: account.id,
        revoked_grants: done.revoked.length,
        deleted_connections: done.disconnected,
      });
      return { user: userView(done.account), revokedGrants: done.revoked, deletedConnections: done.disconnected };
    },
    async setUserAdmin(actor, accountId, admin) {
      const account = await requireUser(accountId);
      const updated = await store.accounts.update(account.id, { admin });
      await record(actor, 'account.updated', { account_id: account.id, admin });
      return userView(updated);
    },
    async linkIdentity(actor, accountId, issuer, subject) {
      const updated = await changeIdentity(store, await requireUser(accountId), issuer, subject, true);
      await record(actor, 'account.updated', { account_id: accountId, linked: `${issuer} ${subject}` });
      return userView(updated);
    },
    async unlinkIdentity(actor, accountId, issuer, subject) {
      const updated = await changeIdentity(store, await requireUser(accountId), issuer, subject, false);
      await record(actor, 'account.updated', { account_id: accountId, unlinked: `${issuer} ${subject}` });
      return userView(updated);
    },
    async userConnections(accountId) {
      await requireUser(accountId);
      return (await store.connections.list(accountId)).map(({ provider, scopes, providerSubject, expiresAt, createdAt, updatedAt }) => ({
        provider,
        scopes,
        ...(providerSubject !== undefined && { providerSubject }),
        ...(expiresAt !== undefined && { expiresAt }),
        createdAt,
        updatedAt,
      }));
    },
  };
}
