/**
 * The storage contract of the authorization server.
 *
 * One interface, three implementations (memory for tests, SQLite by default, PostgreSQL for
 * several instances). Everything the AS must not forget across restarts goes through it:
 * oidc-provider's models (clients, grants, codes, refresh tokens, sessions, interactions…),
 * local accounts, signing and cookie keys, and small expiring records (CIMD cache, rate
 * limits, login-failure counters).
 */
import type { Adapter } from '../provider/oidc-shapes.js';
import type { JWK } from 'jose';
import type { StorageConfig } from '../config/types.js';

export type { StorageConfig } from '../config/types.js';

/**
 * Who made the account, which decides who may later adopt it by e-mail (see the README's
 * linking matrix): the operator (admin tool, configured users, dev auto-login), an upstream
 * provider's self sign-up (`upstream:<issuer>`), an ID-JAG IdP's just-in-time creation
 * (`id-jag:<issuer>`), the public demo account (`demo`, never signs in on a production server),
 * or `unknown` for a row older than this field that had an upstream identity.
 */
export type AccountSource = 'operator' | 'unknown' | 'demo' | `upstream:${string}` | `id-jag:${string}`;

export interface AccountRecord {
  /** Stable subject (`sub`) of the account; never reused. */
  id: string;
  /** Created only in its canonical display-safe form (`usernameProblem` of @mcp-auth-kit/protocol). */
  username: string;
  /** Encoded password hash (algorithm and parameters inside), or null for upstream-only accounts. */
  passwordHash: string | null;
  displayName?: string;
  disabled: boolean;
  /** Upstream identities mapped to this account: `${issuer} ${subject}` strings. */
  upstreamIdentities?: string[];
  /** Set at creation; `update` changes it only to `operator` (the operator adopting the account). */
  source: AccountSource;
  /**
   * The operator's console role (issue 44): granted only by the admin tool, the first-admin
   * environment name or another admin. Every backend returns a boolean; absent in input = false.
   */
  admin?: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A new account: `source` defaults to `operator` (the self sign-up paths always name theirs). */
export type NewAccount = Omit<AccountRecord, 'createdAt' | 'updatedAt' | 'source'> & { source?: AccountSource };
/**
 * What `update` may change (members set to `undefined` are left as they are). `source` only
 * becomes `operator`: the admin tool's explicit adoption (`user set-password --adopt`).
 */
export type AccountPatch = Partial<Omit<AccountRecord, 'id' | 'createdAt' | 'updatedAt' | 'source'>> & { source?: 'operator' };

export interface AccountStore {
  /** Refuses (`invalid_input`) a username that is not canonical and display-safe. */
  create(account: NewAccount): Promise<AccountRecord>;
  findById(id: string): Promise<AccountRecord | undefined>;
  /** Usernames compare by their canonical key (`identityKey`: NFKC, then lower case). */
  findByUsername(username: string): Promise<AccountRecord | undefined>;
  findByUpstreamIdentity(issuer: string, subject: string): Promise<AccountRecord | undefined>;
  list(): Promise<AccountRecord[]>;
  update(id: string, patch: AccountPatch): Promise<AccountRecord>;
}

/**
 * A user's connection to a third-party provider (the token vault): one per (account, provider).
 * The provider's tokens are sealed (AES-256-GCM, third-party/seal.ts) under the key `keyId`
 * names, with the account and provider as associated data: a row copied to another account or
 * provider does not open. What is not secret stays readable for the account page and clean-up.
 */
export interface ConnectionRecord {
  accountId: string;
  /** The provider's short name (`thirdParty.providers` key). */
  provider: string;
  /** Which vault key sealed `sealed` (a hash of the key, never the key). */
  keyId: string;
  /** The sealed token set: base64url of nonce ‖ ciphertext ‖ tag. */
  sealed: string;
  /** Scopes the provider granted. */
  scopes: string[];
  /** The user's subject at the provider, when it said (an ID token's `sub`). */
  providerSubject?: string;
  /** When the provider's access token expires (epoch seconds); undefined: the provider did not say. */
  expiresAt?: number;
  /** Epoch seconds. */
  createdAt: number;
  updatedAt: number;
  /** Grows by one at every write: a replacement names the version it read (refresh under concurrency). */
  version: number;
}

/** What a write gives: the store sets the timestamps and the version. */
export type ConnectionInput = Omit<ConnectionRecord, 'createdAt' | 'updatedAt' | 'version'>;

export interface ConnectionStore {
  /** Creates or replaces the connection of (account, provider); `createdAt` of a replaced one is kept. */
  put(connection: ConnectionInput): Promise<ConnectionRecord>;
  /**
   * Replaces the connection only if its version is still `version` (a refresh that raced with
   * another one, or with a disconnect, writes nothing); the new record, or undefined.
   */
  replace(connection: ConnectionInput, version: number): Promise<ConnectionRecord | undefined>;
  get(accountId: string, provider: string): Promise<ConnectionRecord | undefined>;
  /** The account's connections, by provider name. */
  list(accountId: string): Promise<ConnectionRecord[]>;
  /** True when there was one. */
  delete(accountId: string, provider: string): Promise<boolean>;
  /** Every connection of the account (disabled, removed, adopted); how many. */
  deleteAccount(accountId: string): Promise<number>;
}

/** A persisted signing key: the private JWK (with `kid`, `alg`, `use: "sig"`). */
export interface StoredSigningKey {
  jwk: JWK;
  /**
   * `next`: published in the JWKS, not yet used to sign (rotation step 1);
   * `current`: signs new tokens; `retired`: published until `retireAfter` (epoch seconds),
   * so tokens it signed keep validating until they expire.
   */
  status: 'next' | 'current' | 'retired';
  createdAt: number;
  retireAfter?: number;
}

export interface KeyStore {
  /** Every key to publish/use, current signer first; generates and persists one on first use. */
  signingKeys(): Promise<StoredSigningKey[]>;
  /**
   * Rotation: the `next` key (created by a previous call if none) becomes `current`, the old
   * `current` becomes `retired` until now + `retireAfterSeconds`, a fresh `next` is published.
   */
  rotateSigningKeys(retireAfterSeconds: number): Promise<StoredSigningKey[]>;
  /** Cookie signing keys, newest first; generated and persisted on first use. */
  cookieKeys(): Promise<string[]>;
  rotateCookieKeys(): Promise<string[]>;
}

/** Small expiring records shared by every instance (CIMD documents, rate limits, lockouts). */
export interface KeyValueStore {
  get<T = unknown>(namespace: string, key: string): Promise<T | undefined>;
  set(namespace: string, key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /** Atomically adds `by` to a counter that expires `ttlSeconds` after it was created; returns the new value. */
  increment(namespace: string, key: string, by: number, ttlSeconds: number): Promise<number>;
  /**
   * Atomically takes `by` back from a live counter (never below 0) and returns the new value. An
   * absent or expired counter stays absent (undefined): giving back a count must never start a
   * new window, or a limit would be reset by its own bookkeeping.
   */
  decrement(namespace: string, key: string, by: number): Promise<number | undefined>;
  delete(namespace: string, key: string): Promise<void>;
  /**
   * Every live entry of one namespace (a namespace meant to be listed stays small: the
   * revocation records, one per grant revoked within the longest token lifetime).
   */
  list<T = unknown>(namespace: string): Promise<KeyValueEntry<T>[]>;
}

/** One live entry of {@link KeyValueStore.list}. */
export interface KeyValueEntry<T = unknown> {
  key: string;
  value: T;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/**
 * One audit event kept in the store (audit.ts writes each event to the log and here): searchable
 * by account, client, event name, operator and time. `fields` went through the logger's
 * redaction before they were stored: no secret is kept.
 */
export interface AuditRecord {
  /** Assigned by the store, increasing with insertion order (a decimal string). */
  id: string;
  /** Epoch milliseconds. */
  at: number;
  event: string;
  /** The operator's `sub` for a change made through the console or the admin tool. */
  actor?: string;
  /** The account the event is about (`account_id` / `account` / `sub` of the event's fields). */
  accountId?: string;
  clientId?: string;
  fields: Record<string, unknown>;
}

export type NewAuditRecord = Omit<AuditRecord, 'id'>;

/** Every member narrows the search; results newest first. */
export interface AuditQuery {
  accountId?: string;
  clientId?: string;
  event?: string;
  actor?: string;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
  /** Only records with an id lower than this one (the next page of a newest-first listing). */
  before?: string;
  /** Default 100, at most 1000. */
  limit?: number;
}

export interface AuditStore {
  append(record: NewAuditRecord): Promise<AuditRecord>;
  /** Several records in one write (the audit sink's batches); how many were written. */
  appendMany(records: readonly NewAuditRecord[]): Promise<number>;
  search(query: AuditQuery): Promise<AuditRecord[]>;
  /** Deletes records older than `before` (epoch ms); how many (the retention purge). */
  purge(before: number): Promise<number>;
}

/**
 * The operator's CIMD trust policy kept in the store (set in the console, over the config
 * tree's `cimd.allowedHosts` / `deniedHosts`, which stay in force: a host denied by either is denied).
 */
export interface CimdTrustPolicy {
  /** Host patterns (`example.com`, `*.example.com`) whose clients need no approval. */
  allowedHosts: string[];
  /** Host patterns always refused. */
  deniedHosts: string[];
  /** A client from a host not in `allowedHosts` waits for an operator's approval. */
  approvalRequired: boolean;
  /** Epoch seconds; absent before the first change. */
  updatedAt?: number;
  updatedBy?: string;
}

export type CimdClientStatus = 'pending' | 'approved' | 'denied';

/** One CIMD client as the approval queue knows it, by its client_id URL. */
export interface CimdClientRecord {
  clientId: string;
  /** The document's host (the client_id URL's hostname). */
  host: string;
  status: CimdClientStatus;
  /** Epoch seconds. */
  firstSeen: number;
  /** Epoch seconds of the last use in an authorization request. */
  lastSeen: number;
  decidedAt?: number;
  /** The operator's `sub`. */
  decidedBy?: string;
}

export interface CimdTrustStore {
  /** The stored policy; the default (nothing allowed or denied, no approval step) before any change. */
  policy(): Promise<CimdTrustPolicy>;
  setPolicy(policy: Omit<CimdTrustPolicy, 'updatedAt'>): Promise<CimdTrustPolicy>;
  /**
   * Records that a client was seen: a new one gets `status` (pending, or approved when its host
   * needs no approval), a known one keeps its status and gets `lastSeen` moved. Returns the record.
   */
  see(clientId: string, host: string, status: CimdClientStatus): Promise<CimdClientRecord>;
  get(clientId: string): Promise<CimdClientRecord | undefined>;
  /** Newest first seen first; optionally only one status. */
  list(status?: CimdClientStatus): Promise<CimdClientRecord[]>;
  /** Sets an operator's decision (a client not seen yet is recorded with it); the record. */
  decide(clientId: string, host: string, status: CimdClientStatus, by: string): Promise<CimdClientRecord>;
  /** True when there was one. */
  delete(clientId: string): Promise<boolean>;
}

export interface Store {
  readonly kind: StorageConfig['kind'];
  /** oidc-provider adapter factory: one adapter per model name ("Client", "Grant", …). */
  adapter(name: string): Adapter;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly kv: KeyValueStore;
  /** Third-party connections (the token vault's sealed records). */
  readonly connections: ConnectionStore;
  /** The audit log (issue 44). */
  readonly audit: AuditStore;
  /** The CIMD trust policy and approval queue (issue 44). */
  readonly cimdTrust: CimdTrustStore;
  /** Every live row of one oidc-provider model (the console's client list: `Client`). */
  listModels(model: string): Promise<Array<{ id: string; payload: Record<string, unknown> }>>;
  /** Resolves when the backing store answers (readiness). */
  ping(): Promise<void>;
  /** Deletes expired rows; returns how many. */
  cleanup(): Promise<number>;
  close(): Promise<void>;
}
