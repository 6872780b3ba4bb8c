/**
 * The admin service's views and inputs (issue 44): what the JSON admin API answers and the admin
 * tool prints. No view carries a secret: no client secret, token, password hash or key material.
 */
import type { AuditQuery, AuditRecord, CimdClientRecord, CimdClientStatus, CimdTrustPolicy } from '../storage/types.js';

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
