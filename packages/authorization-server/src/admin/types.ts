/**
 * The admin service's views and inputs (issue 44): what the JSON admin API answers and the admin
 * tool prints. No view carries a secret: no client secret, token, password hash or key material.
 */
import type { ClientMetadata } from '../config/types.js';
import type { Logger } from '../ops/logger.js';
import type { AuditQuery, AuditRecord, CimdClientRecord, CimdClientStatus, CimdTrustPolicy, Store } from '../storage/types.js';

export type { AuditQuery, AuditRecord, CimdClientRecord, CimdClientStatus, CimdTrustPolicy };

/** Who made a change: the operator's `sub` and the door it came through; goes into every audit event. */
export interface Actor {
  /** The operator's account id; `cli` when the admin tool runs without one. */
  sub: string;
  via: 'console' | 'cli';
}

/** Where a client comes from. */
export type ClientOrigin = 'cimd' | 'dcr' | 'configured';

export interface ClientView {
  clientId: string;
  origin: ClientOrigin;
  clientName?: string;
  /** CIMD: the document's host. */
  host?: string;
  /** CIMD: the approval queue's status. */
  approval?: CimdClientStatus;
  redirectUris: string[];
  grantTypes: string[];
  tokenEndpointAuthMethod?: string;
  /** Epoch seconds: DCR registration time, CIMD first seen. */
  createdAt?: number;
  /** Epoch milliseconds of the last token issued or refreshed for it (from the audit log). */
  lastUsedAt?: number;
  disabled: boolean;
}

export interface UserView {
  id: string;
  username: string;
  displayName?: string;
  disabled: boolean;
  admin: boolean;
  source: string;
  /** `<issuer> <sub>` strings. */
  linkedIdentities: string[];
  /** Whether a password is set (never the hash). */
  hasPassword: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface NewUser {
  username: string;
  password?: string;
  displayName?: string;
  admin?: boolean;
}

export interface GrantView {
  grantId: string;
  accountId: string;
  username: string;
  clientId: string;
  /** resource → granted scopes */
  resources: Record<string, string[]>;
  /** Epoch seconds. */
  expiresAt?: number;
}

export interface GrantQuery {
  accountId?: string;
  clientId?: string;
  resource?: string;
}

export interface ConnectionView {
  provider: string;
  scopes: string[];
  providerSubject?: string;
  expiresAt?: number;
  createdAt: number;
  updatedAt: number;
}

export interface SigningKeyView {
  kid: string;
  alg?: string;
  status: 'next' | 'current' | 'retired';
  createdAt: number;
  retireAfter?: number;
}

export interface CookieKeysView {
  /** How many are kept: the newest signs, the others still verify. Never the keys. */
  count: number;
}

export interface DisableUserResult {
  user: UserView;
  /** Client ids whose grants were revoked. */
  revokedGrants: string[];
  deletedConnections: number;
}

/** A refusal of the service: `error` is an OAuth-style code the API turns into its status. */
export class AdminServiceError extends Error {
  constructor(
    message: string,
    readonly error: 'not_found' | 'invalid_request' | 'conflict',
  ) {
    super(message);
    this.name = 'AdminServiceError';
  }
}

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
