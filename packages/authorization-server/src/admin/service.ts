/**
 * The admin service (issue 44): one set of operations over the store, used by the JSON admin
 * API (under the console path) and the admin tool (`apps/auth-server/src/admin.ts`, which opens
 * the store directly, without a running server), so that the two never disagree. Every change
 * writes an audit event with the operator's `sub`; no answer carries a secret.
 */
import type { ClientMetadata } from '../config/types.js';
import type { Logger } from '../logger.js';
import type { Store } from '../storage/types.js';
import type {
  Actor,
  AuditQuery,
  AuditRecord,
  CimdClientRecord,
  CimdClientStatus,
  CimdTrustPolicy,
  ClientView,
  ConnectionView,
  CookieKeysView,
  DisableUserResult,
  GrantQuery,
  GrantView,
  NewUser,
  SigningKeyView,
  UserView,
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

export function createAdminService(_options: AdminServiceOptions): AdminService {
  throw new Error('not yet');
}
