/**
 * The admin service (issue 44): one set of operations over the store, used by the JSON admin
 * API (under the console path) and the admin tool (`apps/auth-server/src/admin.ts`, which opens
 * the store directly, without a running server), so that the two never disagree. Every change
 * writes an audit event with the operator's `sub`; no answer carries a secret.
 */
import { forgetCimdDocument } from '../clients/cimd.js';
import type { ClientMetadata } from '../config/types.js';
import { revokeRememberedGrant } from '../interactions/remembered-grants.js';
import { StorageError } from '../storage/errors.js';
import { cimdHostOf } from '../clients/cimd-trust-gate.js';
import { markClientDisabled } from './client-disabled.js';
import { cimdClientView, listClientViews } from './clients.js';
import { listGrantViews } from './grants.js';
import { DEFAULT_RETIRE_AFTER_SECONDS, retireAfter, signingKeyView } from './keys.js';
import { changeRecorder } from './record.js';
import { changeIdentity, createAccount, disableAccount, findAccount, matchesSearch, requireAccount, userView } from './users.js';
import type { Logger } from '../ops/logger.js';
import type { Store } from '../storage/types.js';
import {
  AdminServiceError,
  type Actor,
  type AuditQuery,
  type AuditRecord,
  type CimdClientRecord,
  type CimdClientStatus,
  type CimdTrustPolicy,
  type ClientView,
  type ConnectionView,
  type CookieKeysView,
  type DisableUserResult,
  type GrantQuery,
  type GrantView,
  type NewUser,
  type SigningKeyView,
  type UserView,
} from './types.js';

export interface AdminServiceOptions {
  store: Store;
  /** The configured (pre-registered) clients, to tell their origin. */
  configuredClients?: readonly ClientMetadata[];
  /** Where audit events also go (the process log); default: only the store. */
  logger?: Logger;
  /**
   * The longest lifetime of a token the AS signs (seconds): a retired signing key stays
   * published at least that long. Default 86400.
   */
  longestTokenLifetime?: number;
  /** Production server: the demo account never becomes usable. */
  production?: boolean;
}

export interface AdminService {
  // clients
  listClients(): Promise<ClientView[]>;
  getClient(clientId: string): Promise<ClientView | undefined>;
  /** A disabled client is refused at the authorization and token endpoints; its grants are revoked. */
  setClientDisabled(actor: Actor, clientId: string, disabled: boolean): Promise<ClientView>;
  /** DCR clients are deleted, CIMD clients forgotten (seen again they wait anew under the policy); configured ones refused. */
  deleteClient(actor: Actor, clientId: string): Promise<void>;

  // CIMD trust policy and approval queue
  cimdPolicy(): Promise<CimdTrustPolicy>;
  setCimdPolicy(actor: Actor, policy: Omit<CimdTrustPolicy, 'updatedAt' | 'updatedBy'>): Promise<CimdTrustPolicy>;
  listCimdClients(status?: CimdClientStatus): Promise<CimdClientRecord[]>;
  decideCimdClient(actor: Actor, clientId: string, decision: 'approved' | 'denied'): Promise<CimdClientRecord>;

  // users
  listUsers(search?: string): Promise<UserView[]>;
  getUser(idOrUsername: string): Promise<UserView | undefined>;
  createUser(actor: Actor, user: NewUser): Promise<UserView>;
  /** Disabling revokes every grant (revocation signal included) and deletes third-party connections. */
  setUserDisabled(actor: Actor, accountId: string, disabled: boolean): Promise<DisableUserResult>;
  setUserAdmin(actor: Actor, accountId: string, admin: boolean): Promise<UserView>;
  linkIdentity(actor: Actor, accountId: string, issuer: string, subject: string): Promise<UserView>;
  unlinkIdentity(actor: Actor, accountId: string, issuer: string, subject: string): Promise<UserView>;
  userConnections(accountId: string): Promise<ConnectionView[]>;

  // grants
  listGrants(query: GrantQuery): Promise<GrantView[]>;
  /** The CLI's reach: the grant, its refresh tokens and codes, the revocation signal. False: none. */
  revokeGrant(actor: Actor, accountId: string, clientId: string): Promise<boolean>;

  // keys
  listSigningKeys(): Promise<SigningKeyView[]>;
  /** `retireAfterSeconds` below the longest token lifetime is refused (`invalid_request`). */
  rotateSigningKeys(actor: Actor, retireAfterSeconds?: number): Promise<SigningKeyView[]>;
  cookieKeys(): Promise<CookieKeysView>;
  rotateCookieKeys(actor: Actor): Promise<CookieKeysView>;

  // audit
  searchAudit(query: AuditQuery): Promise<AuditRecord[]>;
}

/** Revokes every grant any account holds for the client (disabled, denied or deleted client); their account ids. */
async function revokeClientGrants(store: Store, clientId: string): Promise<string[]> {
  const revoked: string[] = [];
  for (const g of await listGrantViews(store, { clientId })) {
    if (await revokeRememberedGrant(store, g.accountId, clientId)) revoked.push(g.accountId);
  }
  return revoked;
}

/** The document host of a CIMD client_id URL, or a refusal (the queue only holds https URLs). */
function cimdHost(clientId: string): string {
  const host = cimdHostOf(clientId);
  if (!host) throw new AdminServiceError('a CIMD client id is an https URL', 'invalid_request');
  return host;
}

export function createAdminService(options: AdminServiceOptions): AdminService {
  const { store } = options;
  const configured = options.configuredClients ?? [];
  const longest = options.longestTokenLifetime ?? DEFAULT_RETIRE_AFTER_SECONDS;
  const record = changeRecorder(store, options.logger);

  const getClient = async (clientId: string): Promise<ClientView | undefined> => {
    const cimd = await store.cimdTrust.get(clientId);
    if (cimd) return cimdClientView(store, cimd);
    const isConfigured = configured.some((c) => c.client_id === clientId);
    if (!isConfigured && !(await store.adapter('Client').find(clientId))) return undefined;
    return (await listClientViews(store, configured)).find((c) => c.clientId === clientId);
  };
  const requireClient = async (clientId: string) => {
    const client = await getClient(clientId);
    if (!client) throw new AdminServiceError('no such client', 'not_found');
    return client;
  };
  const requireUser = (accountId: string) => requireAccount(store, accountId);

  return {
    listClients: () => listClientViews(store, configured),
    getClient,
    async setClientDisabled(actor, clientId, disabled) {
      await requireClient(clientId);
      await markClientDisabled(store.kv, clientId, disabled, actor.sub);
      const revoked = disabled ? await revokeClientGrants(store, clientId) : [];
      await record(actor, 'client.updated', { client_id: clientId, disabled, revoked_grants: revoked.length });
      return requireClient(clientId);
    },
    async deleteClient(actor, clientId) {
      const client = await requireClient(clientId);
      if (client.origin === 'configured')
        throw new AdminServiceError('a configured client is removed from the configuration, not here', 'invalid_request');
      const revoked = await revokeClientGrants(store, clientId);
      if (client.origin === 'dcr') await store.adapter('Client').destroy(clientId);
      else {
        await store.cimdTrust.delete(clientId);
        await forgetCimdDocument(store.kv, clientId);
      }
      await markClientDisabled(store.kv, clientId, false, actor.sub);
      await record(actor, 'client.deleted', { client_id: clientId, origin: client.origin, revoked_grants: revoked.length });
    },

    cimdPolicy: () => store.cimdTrust.policy(),
    async setCimdPolicy(actor, policy) {
      let saved: CimdTrustPolicy;
      try {
        saved = await store.cimdTrust.setPolicy({ ...policy, updatedBy: actor.sub });
      } catch (error) {
        if (error instanceof StorageError && error.code === 'invalid_input') throw new AdminServiceError(error.message, 'invalid_request');
        throw error;
      }
      await record(actor, 'cimd.policy_changed', {
        allowed_hosts: saved.allowedHosts,
        denied_hosts: saved.deniedHosts,
        approval_required: saved.approvalRequired,
      });
      return saved;
    },
    listCimdClients: (status) => store.cimdTrust.list(status),
    async decideCimdClient(actor, clientId, decision) {
      if (decision !== 'approved' && decision !== 'denied')
        throw new AdminServiceError('decision is approved or denied', 'invalid_request');
      const decided = await store.cimdTrust.decide(clientId, cimdHost(clientId), decision, actor.sub);
      const revoked = decision === 'denied' ? await revokeClientGrants(store, clientId) : [];
      await record(actor, decision === 'approved' ? 'cimd.client_approved' : 'cimd.client_denied', {
        client_id: clientId,
        host: decided.host,
        revoked_grants: revoked.length,
      });
      return decided;
    },

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

    listGrants: (query) => listGrantViews(store, query),
    async revokeGrant(actor, accountId, clientId) {
      if (!(await revokeRememberedGrant(store, accountId, clientId))) return false;
      await record(actor, 'grant.revoked', { account_id: accountId, client_id: clientId });
      return true;
    },

    listSigningKeys: async () => (await store.keys.signingKeys()).map(signingKeyView),
    async rotateSigningKeys(actor, retireAfterSeconds) {
      const keys = await store.keys.rotateSigningKeys(retireAfter(retireAfterSeconds, longest));
      const views = keys.map(signingKeyView);
      await record(actor, 'keys.rotated', { kind: 'signing', current: views.find((k) => k.status === 'current')?.kid });
      return views;
    },
    cookieKeys: async () => ({ count: (await store.keys.cookieKeys()).length }),
    async rotateCookieKeys(actor) {
      const keys = await store.keys.rotateCookieKeys();
      await record(actor, 'keys.rotated', { kind: 'cookie', kept: keys.length });
      return { count: keys.length };
    },

    searchAudit: (query) => store.audit.search(query),
  };
}
