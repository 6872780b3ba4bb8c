/**
 * The authorization server's configuration types, all in one place and importing nothing of
 * this package: every feature reads them from here (through `resolve.ts`'s resolved form), so no
 * feature module and this file import each other in a circle. Defaults: `defaults.ts`; checks:
 * `schema.ts` and `resolve.ts`.
 */
import type { JWK } from 'jose';

export type SqliteDriverName = 'node' | 'better-sqlite3';

/**
 * Minimal structured logger interface used everywhere in the AS. The default writes one line
 * per event to stderr; `pinoLogger()` (ops/pino-logger.ts) writes JSON lines with pino.
 */
export interface Logger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** RFC 7591 client metadata of a pre-registered client (any oidc-provider client property). */
export interface ClientMetadata {
  client_id: string;
  client_secret?: string;
  client_name?: string;
  redirect_uris?: string[];
  grant_types?: string[];
  token_endpoint_auth_method?: string;
  scope?: string;
  /**
   * The MCP server this client is (one of `resources[].resource`): it may then exchange the access
   * tokens it receives for third-party tokens (RFC 8693, `thirdParty`). Confidential clients only.
   */
  resource?: string;
  [key: string]: unknown;
}

export type StorageConfig =
  | { kind: 'memory' }
  /**
   * `file` is the SQLite database path (created with its folder if missing). `driver`: Node's
   * built-in `node:sqlite` (`'node'`, Node ≥ 22.13) or the `better-sqlite3` package; by default
   * `node:sqlite` when this Node has it, else better-sqlite3.
   */
  | { kind: 'sqlite'; file: string; driver?: SqliteDriverName }
  /** `schema` isolates one deployment (or one test run) inside a shared database. */
  | { kind: 'postgres'; url: string; schema?: string };

/** Failed-login brakes of the login page (interactions/throttle.ts). */
export interface LoginThrottleLimits {
  perAddressAndUser: number;
  perUser: number;
  perAddress: number;
  windowSeconds: number;
}

/**
 * A store the caller opened itself (storage/types.ts `Store`), seen structurally here so this
 * file imports nothing of ours; `resolve.ts` tells it from a `StorageConfig`.
 */
export interface OpenedStore {
  adapter(name: string): unknown;
  close(): Promise<void>;
}

export interface DpopConfig {
  /** RFC 9449 DPoP: sender-constrained tokens for clients that send proofs (default true). */
  enabled?: boolean;
  /**
   * 32 random bytes, base64url: key of the stateless `DPoP-Nonce` values (RFC 9449 §8). Every
   * instance behind one balancer must use the same value (env `DPOP_NONCE_SECRET`). Default:
   * derived from the store's first cookie key, which the store already shares between instances.
   */
  nonceSecret?: string;
  /**
   * Demand a server nonce in every proof at the token endpoint (`use_dpop_nonce` otherwise,
   * RFC 9449 §8): proofs cannot be made ahead of time. Default false: nonces are offered
   * (`DPoP-Nonce` on responses) and honoured, and a proof without one needs a fresh `iat`.
   */
  requireNonce?: boolean;
  /** `dpop_signing_alg_values_supported` (default ES256, EdDSA, Ed25519, PS256, RS256). */
  algorithms?: string[];
}

export interface UpstreamProviderConfig {
  /** Shown on the button ("Sign in with <name>") and in logs; unique. */
  name: string;
  /** The provider's issuer identifier (https; http only for a loopback host on a loopback AS issuer). */
  issuer: string;
  clientId: string;
  /** Omitted: a public client (PKCE only, `token_endpoint_auth_method: none`). */
  clientSecret?: string;
  /** Scopes requested upstream (default `openid profile email`; `openid` is always added). */
  scopes?: string[];
  /**
   * Create a local account on the first sign-in of an unknown upstream identity (default
   * false: the identity must already be linked to an account, else the sign-in is refused).
   */
  allowSignup?: boolean;
  /**
   * The provider lives on the private network: its discovery document may name private addresses
   * (default false: public addresses only, loopback only for a provider on a loopback host).
   */
  allowPrivateNetwork?: boolean;
}

/**
 * A third-party OAuth 2 / OpenID Connect provider (a code host, a calendar, a drive) whose tokens
 * the AS keeps for its users (the token vault) and hands to the MCP servers allowed to use it, by
 * RFC 8693 token exchange. Its short name (the key in `thirdParty.providers`) is the `audience` of
 * the exchange and appears in the connect pages' URLs and in audit lines.
 */
export interface ThirdPartyProviderConfig {
  /**
   * The provider's issuer identifier: its endpoints are discovered (RFC 8414, then OpenID
   * Connect Discovery, through the egress policy) and the RFC 9207 `iss` of its authorization
   * responses is compared with it. With `authorizationEndpoint` and `tokenEndpoint` it is not
   * discovered, only compared.
   */
  issuer?: string;
  /** Explicit endpoints instead of discovery (both or neither). */
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  /** RFC 7009 endpoint: the provider's tokens are revoked there when the user disconnects. */
  revocationEndpoint?: string;
  /** The AS's client id at the provider (one client for every user; the redirect URI is `<issuer>/connect/callback`). */
  clientId: string;
  /** Required unless `tokenEndpointAuthMethod` is `none` (a public client at the provider: PKCE only). */
  clientSecret?: string;
  /** How the AS authenticates at the provider's token endpoint (default `client_secret_basic`). */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
  /** Scopes asked of the provider when a user connects. */
  scopes: string[];
  /** The MCP servers (`resources[].resource`) that may exchange for this provider's tokens. */
  resources: string[];
  /** Shown on the connect and account pages and in the `interaction_required` answer (default: the name). */
  displayName?: string;
  /** The provider lives on the private network (default false: public addresses; loopback for a loopback provider). */
  allowPrivateNetwork?: boolean;
}

/** The token vault and its providers (README "Third-party authorization (token vault)"). */
export interface ThirdPartyConfig {
  /** Provider short name (`[a-z0-9][a-z0-9._-]*`, ≤ 64) → its configuration. */
  providers: Record<string, ThirdPartyProviderConfig>;
  /**
   * 32 random bytes, base64url: encrypts the provider tokens at rest (AES-256-GCM). Required in
   * production; elsewhere, unset, a key derived from the store's cookie keys is used (with a warning).
   */
  encryptionKey?: string;
  /** Keys that encrypted earlier records: read, never written (rotation: the new key in `encryptionKey`). */
  previousEncryptionKeys?: string[];
  /** Lifetime of a connect URL, in seconds (default 600). */
  connectTicketTTL?: number;
}

/** How an ID-JAG's user finds its local account. */
export type IdJagAccountMatch = 'subject' | 'email';

/** An enterprise identity provider whose ID-JAGs this server accepts. */
export interface TrustedIdpConfig {
  /** Shown in logs and audit events (default: the issuer). */
  name?: string;
  /** The IdP's issuer identifier, compared as an exact string with the ID-JAG's `iss`. */
  issuer: string;
  /** The IdP's JWKS URL (https; http only for a loopback IdP on a loopback issuer). One of `jwksUri` / `jwks`. */
  jwksUri?: string;
  /** The IdP's public keys inline, instead of `jwksUri`. */
  jwks?: { keys: JWK[] };
  /**
   * `client_id`s (at this server) that may present this IdP's ID-JAGs (the ID-JAG's `client_id`
   * claim names one of them); `"*"`: every client allowed to use the grant at all.
   */
  clients: string[];
  /** Signature algorithms accepted (default RS256, PS256, ES256, EdDSA; never `none` or HMAC). */
  algorithms?: string[];
  /**
   * `subject` (default): the account linked to (`iss`, `sub`). `email`: the same, and on a
   * user's first ID-JAG an existing account whose username is the verified `email` is linked.
   */
  accountMatch?: IdJagAccountMatch;
  /** Create an account on a user's first ID-JAG (just-in-time; default true). */
  createAccounts?: boolean;
  /**
   * With `accountMatch: 'email'`: `claim` (default) links only when the ID-JAG says
   * `email_verified: true`; `trusted` takes every `email` of this IdP as verified (IdPs such as
   * Entra ID that send no `email_verified`) and then requires `emailDomains`.
   */
  verifiedEmail?: 'claim' | 'trusted';
  /** With `accountMatch: 'email'`: only e-mail addresses of these domains are linked. */
  emailDomains?: string[];
  /** The JWKS lives on the private network (default false: public addresses; loopback for a loopback IdP). */
  allowPrivateNetwork?: boolean;
}

export interface IdJagConfig {
  trustedIdps: TrustedIdpConfig[];
  /**
   * Issue a refresh token too, to clients registered with the `refresh_token` grant (default
   * false: the IdP stays the decision-maker, the client asks it for a new ID-JAG; draft §4.4.3).
   */
  refreshTokens?: boolean;
  /**
   * Clients other than the configured ones that may use the grant (default none):
   * `dynamic` (RFC 7591 registrations) and `cimd` (Client ID Metadata Documents, which then
   * authenticate with `private_key_jwt`). Confidential clients only, whatever the source.
   */
  allowClients?: Array<'dynamic' | 'cimd'>;
  /** Clock skew accepted on `exp`, `nbf` and `iat`, in seconds (default 30). */
  clockToleranceSeconds?: number;
  /** Longest ID-JAG lifetime accepted (`exp` − now and now − `iat`), in seconds (default 600). */
  maxAgeSeconds?: number;
}

export interface MetricsConfig {
  /** Serve `/metrics` (default true). */
  enabled?: boolean;
  /** Also collect Node.js process metrics (CPU, memory, event loop; default false). */
  collectDefaultMetrics?: boolean;
  /** When set, `/metrics` requires `Authorization: Bearer <token>` (at least 16 characters). */
  token?: string;
}

/** A protected resource (an MCP server) this AS issues tokens for. */
export interface ResourceConfig {
  /** Canonical URI of the MCP server (RFC 8707 §2), e.g. `https://mcp.example.com/mcp`. */
  resource: string;
  /** Display name on the consent and account pages (e.g. the MCP server's PRM `resource_name`); default: its URL alone. */
  name?: string;
  /** Scope → human description shown on the consent page. */
  scopes: Record<string, string>;
  /** Access token lifetime in seconds for this resource (default: the server-wide `accessTokenTTL`). */
  accessTokenTTL?: number;
  /**
   * Scopes requested on the client's behalf when an authorization request names this resource
   * but no scope (e.g. clients that found no `scopes_supported`). Default: none, and such a
   * request gets `invalid_scope`.
   */
  defaultScopes?: string[];
  /**
   * RFC 7662 §4: `client_id`s of pre-registered confidential clients (this resource server's own
   * credentials) that may introspect access tokens issued for this resource. A pre-registered
   * confidential client whose `client_id` is `resource` itself may too. Default: none.
   */
  introspectionClients?: string[];
}

export interface RegistrationConfig {
  /** RFC 7591 Dynamic Client Registration (default true). */
  enabled?: boolean;
  /** When set, POST /reg requires `Authorization: Bearer <initialAccessToken>`. */
  initialAccessToken?: string;
  /** Registrations allowed per client address per window (default 20 per 3600 s); false disables. */
  rateLimit?: { max: number; windowSeconds: number } | false;
  /** Lifetime of confidential clients' secrets in seconds (default 30 days; 0 = never expires). */
  clientSecretTTL?: number;
  /** RFC 7592 client configuration endpoint (default true). */
  management?: boolean;
}

export interface CimdConfig {
  /** Client ID Metadata Documents (default true). */
  enabled?: boolean;
  /**
   * Dev only (refused unless the issuer host and the listen addresses are loopback, and in
   * production): let the AS fetch documents from
   * loopback / private addresses, which the SSRF defence refuses otherwise.
   */
  allowPrivateNetwork?: boolean;
  /** Host patterns (`example.com`, `*.example.com`) whose documents may be fetched; empty = any. */
  allowedHosts?: string[];
  /** Host patterns that are always refused (checked before `allowedHosts`). */
  deniedHosts?: string[];
  /** Dev only, with `allowPrivateNetwork`: extra PEM CA certificates trusted for document fetches. */
  extraCaCertificates?: string;
}

export interface UserSeed {
  username: string;
  password: string;
  displayName?: string;
  /**
   * `'demo'` marks the public demo account (the app's `demo` / `demo-password`): never signs in
   * on a production server, and is not seeded into a store a production server has marked.
   */
  source?: 'demo';
}

export interface RefreshTokenConfig {
  /** Issue refresh tokens to clients registered with the `refresh_token` grant (default true). */
  enabled?: boolean;
  /** Refresh token lifetime in seconds (default 14 days). */
  ttl?: number;
  /**
   * Grace window in seconds (default 10, 0 = off, at most 60) during which a rotated refresh
   * token presented again by the same client with the same request gets the same new token
   * pair instead of triggering reuse detection (see src/refresh-grace.ts).
   */
  reuseGraceSeconds?: number;
}

export interface AuthorizationServerConfig {
  /** Issuer identifier: https URL (http only for loopback hosts), no query or fragment. */
  issuer: string;
  resources: ResourceConfig[];
  /** Pre-registered clients (oidc-provider / RFC 7591 client metadata). */
  clients?: ClientMetadata[];
  registration?: RegistrationConfig;
  cimd?: CimdConfig;
  /** Dev only: log this user in and grant requested scopes without pages (loopback issuer and listen addresses, not production). */
  devAutoLogin?: string;
  storage: StorageConfig | OpenedStore;
  /** Accounts created at start-up when their username does not exist yet. */
  users?: UserSeed[];
  /** Default access token lifetime in seconds (default 300). */
  accessTokenTTL?: number;
  refreshTokens?: RefreshTokenConfig;
  /** Browser session lifetime in seconds (default 1 day). */
  sessionTTL?: number;
  /**
   * Believe X-Forwarded-* from the proxies in front (behind a TLS-terminating proxy): their
   * number (a hop count) or their addresses/CIDRs. `true` = exactly one proxy. Default false.
   */
  trustProxy?: boolean | number | string | readonly string[];
  /** RFC 9449 DPoP: nonces, nonce policy, algorithms (see `DpopConfig`; on by default). */
  dpop?: DpopConfig;
  /** Name shown on the login and consent pages. */
  serviceName?: string;
  /** Consent-page descriptions of the OpenID Connect scopes (`openid`, `profile`, `offline_access`) over `DEFAULT_SCOPE_DESCRIPTIONS`. */
  scopeDescriptions?: Record<string, string>;
  /** Upstream OpenID Connect providers offered as "Sign in with <name>" on the login page. */
  upstream?: UpstreamProviderConfig[];
  /**
   * Redirect URIs are https, loopback http (RFC 8252 §7.3) or reverse-domain private-use schemes
   * (RFC 8252 §7.1). `extraSchemes` admits further single-word schemes of desktop hosts the
   * operator trusts (e.g. `["myhost"]`), for every client: DCR, CIMD and configured ones.
   */
  redirectUris?: { extraSchemes?: string[] };
  /** Failed-login brakes (defaults: 10 per address+user, 50 per user, 100 per address, 900 s window). */
  loginThrottle?: Partial<LoginThrottleLimits>;
  logger?: Logger;
  /**
   * Production mode: refuses dev switches, the memory store, a non-loopback http issuer and a
   * loopback http issuer on listen addresses reachable from outside,
   * each with how to fix it (the app sets it from NODE_ENV=production). Default false.
   */
  production?: boolean;
  /** Prometheus metrics at `/metrics` (default on, per-instance registry). */
  metrics?: MetricsConfig;
  /**
   * The addresses the server listens on, as given to `listen()` (the app sets it). When set,
   * the switches of ops/dev-switches.ts are refused unless every one is loopback (`127.0.0.1`, `::1`,
   * `localhost`), and production refuses a loopback http issuer unless every one is loopback:
   * `0.0.0.0`, `::` or any other address is reachable from outside, whatever the issuer says.
   * Unset: unknown, and only production and the issuer decide.
   */
  listenHosts?: string[];
  /** Timeout of the store check behind `/readyz`, in milliseconds (default 2000). */
  readinessTimeoutMs?: number;
  /** MCP enterprise-managed authorization: the ID-JAG (RFC 7523 JWT bearer) grant and its trusted IdPs. Off when absent. */
  idJag?: IdJagConfig;
  /** Third-party authorization: the token vault, its providers, connect pages and RFC 8693 token exchange. Off when absent. */
  thirdParty?: ThirdPartyConfig;
  /** The audit log kept in the store (issue 44): how long records are kept. */
  audit?: AuditConfig;
  /** The operator console and its JSON admin API (issue 44). Off when absent. */
  console?: ConsoleConfig;
}

export interface AuditConfig {
  /** Days an audit record is kept in the store before the periodic purge deletes it (default 90). */
  retentionDays?: number;
}

export interface ConsoleConfig {
  /** Path of the console under the issuer's origin, e.g. `/console` (the JSON admin API is `<path>/api`). */
  path: string;
  /** A change needs a sign-in at most this many seconds old (default 300). */
  maxAgeSeconds?: number;
  /** Username made an admin at start-up when it exists (the first admin; env `CONSOLE_FIRST_ADMIN` in the app). */
  firstAdmin?: string;
}

/** An ID-JAG configuration with its defaults applied (config/resolve.ts). */
export interface ResolvedIdJagConfig extends IdJagConfig {
  trustedIdps: Array<TrustedIdpConfig & { algorithms: string[] }>;
  refreshTokens: boolean;
  allowClients: Array<'dynamic' | 'cimd'>;
  clockToleranceSeconds: number;
  maxAgeSeconds: number;
}

/**
 * The configuration every feature reads: the caller's options over the defaults tree
 * (config/defaults.ts), checked. Features never restate a default.
 */
export interface ResolvedConfig {
  issuer: string;
  resources: ResourceConfig[];
  clients: ClientMetadata[];
  registration: {
    enabled: boolean;
    management: boolean;
    rateLimit: { max: number; windowSeconds: number } | false;
    clientSecretTTL: number;
    initialAccessToken?: string;
  };
  cimd: CimdConfig & { enabled: boolean; allowPrivateNetwork: boolean };
  devAutoLogin?: string;
  storage: StorageConfig | OpenedStore;
  users: UserSeed[];
  accessTokenTTL: number;
  refreshTokens: { enabled: boolean; ttl: number; reuseGraceSeconds: number };
  sessionTTL: number;
  trustProxy: boolean | number | string | readonly string[];
  dpop: { enabled: boolean; requireNonce: boolean; algorithms: string[]; nonceSecret?: string };
  /** Default: the issuer's host. */
  serviceName: string;
  /** The OpenID Connect scopes' consent-page descriptions, configured ones over the defaults. */
  scopeDescriptions: Record<string, string>;
  upstream: Array<UpstreamProviderConfig & { scopes: string[] }>;
  redirectUris: { extraSchemes: string[] };
  loginThrottle: LoginThrottleLimits;
  logger?: Logger;
  production: boolean;
  metrics: { enabled: boolean; collectDefaultMetrics: boolean; token?: string };
  listenHosts?: string[];
  readinessTimeoutMs: number;
  idJag?: ResolvedIdJagConfig;
  thirdParty?: ResolvedThirdPartyConfig;
  audit: { retentionDays: number };
  console?: { path: string; maxAgeSeconds: number; firstAdmin?: string };
}

/** A third-party configuration with its defaults applied (config/resolve.ts). */
export interface ResolvedThirdPartyConfig {
  providers: Record<
    string,
    ThirdPartyProviderConfig & {
      displayName: string;
      tokenEndpointAuthMethod: NonNullable<ThirdPartyProviderConfig['tokenEndpointAuthMethod']>;
      allowPrivateNetwork: boolean;
    }
  >;
  encryptionKey?: string;
  previousEncryptionKeys: string[];
  connectTicketTTL: number;
}
