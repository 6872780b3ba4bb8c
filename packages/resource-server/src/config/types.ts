/**
 * The resource server's options as callers write them, and as `resolve.ts` hands them to the
 * features (checked, every default applied). Its only import is the leaf `../types.js` (the
 * pluggable stores and the logger), so no feature module sits under the option types.
 */
import type { DpopReplayStore, ResourceServerLogger, RevocationList } from '../types.js';

/** Which scopes each MCP operation needs. Every list is a conjunction (all are required). */
export interface ScopePolicy {
  /** Needed by every request (and sent as `scope` in the 401 challenge). */
  default?: readonly string[];
  /** Extra scopes per JSON-RPC method, e.g. `{ 'resources/read': ['notes:read'] }`. */
  methods?: Readonly<Record<string, readonly string[]>>;
  /** Extra scopes per tool name for `tools/call` (by `params.name`). */
  tools?: Readonly<Record<string, readonly string[]>>;
}

/**
 * Scope hierarchy: a scope maps to the narrower scopes it implies, e.g.
 * `{ 'notes:write': ['notes:read'] }` (spec §Step-Up: servers MUST honour hierarchies).
 */
export type ScopeHierarchy = Readonly<Record<string, readonly string[]>>;

export type ChallengeScopeStrategy = 'required' | 'required-and-granted';

export interface IntrospectionOptions {
  /** RFC 7662 introspection endpoint URL. */
  endpoint: string;
  /** Credentials of this resource server at the AS. */
  clientId: string;
  clientSecret: string;
  /** How to send the credentials (default `client_secret_basic`). */
  authMethod?: 'client_secret_basic' | 'client_secret_post';
  /** Upper bound for caching an active response, on top of its `exp` (default 60 s). */
  cacheTtlSeconds?: number;
  /**
   * Also introspect JWT access tokens, after they passed local verification (default `false`:
   * JWTs are only verified locally). The AS then reports a revoked grant before the token
   * expires (RFC 7662 §2.2 `active`), at the cost of one introspection per token and
   * `cacheTtlSeconds`. Needs an AS that introspects its JWTs (ours does).
   */
  introspectJwt?: boolean;
  /** Timeout of each introspection request (default 5 000 ms), independent of `jwks.timeoutMs`. */
  timeoutMs?: number;
}

/** RFC 9449 DPoP at this resource server. */
export interface DpopOptions {
  /** Refuse Bearer tokens: only DPoP-bound tokens with a proof are accepted (default `false`: both). */
  required?: boolean;
  /** JWS algorithms accepted for proofs (asymmetric only; default ES256/384/512, EdDSA, Ed25519, PS*, RS*). */
  algorithms?: readonly string[];
  /** How old a proof may be, in seconds since its `iat` (default 60, at most 600). */
  maxAgeSeconds?: number;
  /** Clock leeway in seconds on both sides of the `iat` window (default 5, at most 300). */
  clockToleranceSeconds?: number;
  /**
   * Server nonces (RFC 9449 §9): every proof must then carry a nonce this server issued
   * (`use_dpop_nonce` + `DPoP-Nonce` otherwise). `secret`: 32 bytes (or base64url of them), the same
   * on every instance behind a balancer (default: random per process). `lifetimeSeconds`: how long
   * a nonce is accepted (default 300).
   */
  nonce?: boolean | { secret?: string | Uint8Array; lifetimeSeconds?: number };
  /** Seen-`jti` store (default in memory, `{ maxEntries: 100000 }`); share one across instances. */
  replay?: { maxEntries?: number } | DpopReplayStore;
  /**
   * The URL(s) clients call this endpoint at, compared with each proof's `htu` (default `resource`).
   * Never taken from `Host` / `X-Forwarded-*`: behind a proxy, `resource` already is the public URL.
   */
  publicUrl?: string | readonly string[];
}

/**
 * Third-party tokens for tool handlers (`thirdPartyToken`): this MCP server's own confidential
 * client at its authorization server, which exchanges the user's MCP access token for a
 * provider's token (RFC 8693). The token endpoint comes from the issuer's RFC 8414 metadata.
 */
export interface ThirdPartyOptions {
  /** This MCP server's client id at the authorization server (a client whose `resource` is this server). */
  clientId: string;
  /** Its client secret (sent to the token endpoint only; never logged). */
  clientSecret: string;
  /** How the credentials are sent (default `client_secret_basic`). */
  authMethod?: 'client_secret_basic' | 'client_secret_post';
  /** Skip discovery: the token endpoint (https, or http on loopback). */
  tokenEndpoint?: string;
  /** Timeout of each exchange request (default 10 000 ms: the AS may refresh the provider token first). */
  timeoutMs?: number;
  /** Provider tokens kept per (MCP token, provider) until shortly before they expire; `false` turns it off. */
  cache?: false | { maxEntries?: number };
  /** A cached provider token is dropped this many seconds before its `expires_in` ends (default 30; at most half its lifetime). */
  expirySkewSeconds?: number;
}

/** {@link ThirdPartyOptions} checked, with their defaults. */
export interface ResolvedThirdPartyOptions {
  clientId: string;
  clientSecret: string;
  authMethod: 'client_secret_basic' | 'client_secret_post';
  tokenEndpoint: string | undefined;
  timeoutMs: number;
  cacheMaxEntries: number;
  expirySkewSeconds: number;
}

/** Options of {@link createResourceServer}. */
export interface ResourceServerOptions {
  /** Canonical resource URI of the MCP endpoint (RFC 8707 §2, RFC 9728 `resource`). */
  resource: string;
  /** Issuer identifiers of the trusted authorization servers (all listed in the metadata). */
  authorizationServers: readonly string[];
  /** RFC 9728 `scopes_supported`: the minimal scopes for basic use (never `offline_access`). */
  scopesSupported?: readonly string[];
  /** Which scopes each request needs; `default` is also the 401 challenge `scope`. */
  scopePolicy?: ScopePolicy;
  /** Broader scopes that imply narrower ones, e.g. `{ 'notes:write': ['notes:read'] }`. */
  scopeHierarchy?: ScopeHierarchy;
  /** Scopes put in a 403 challenge: what the operation needs (default), or that plus known granted ones. */
  challengeScopes?: ChallengeScopeStrategy;
  /** Allowed `Origin` values for the MCP endpoint (default: the origin of `resource`). */
  allowedOrigins?: readonly string[];
  /**
   * `Host` allowlist (`host[:port]`). Unset: a loopback `resource` (localhost, 127.0.0.0/8, ::1)
   * accepts only loopback host names (any port), the DNS-rebinding guard for requests that carry
   * no `Origin`; any other `resource` gets no Host check (proxies may rewrite it).
   */
  allowedHosts?: readonly string[];
  /** RFC 9728 `resource_name`. */
  resourceName?: string;
  /** RFC 9728 `resource_documentation` (URL). */
  resourceDocumentation?: string;
  /** Extra RFC 9728 members for the metadata document. */
  extraMetadata?: Readonly<Record<string, unknown>>;
  /** Also serve the metadata at the root well-known URL (default `true`). */
  serveRootMetadata?: boolean;
  /** `realm` auth-param for challenges (default: none). */
  realm?: string;
  /** JWS algorithms accepted (asymmetric only; default RS/PS/ES 256-512 and EdDSA). */
  algorithms?: readonly string[];
  /** Leeway in seconds for `exp`/`nbf` (default 30, at most 300). */
  clockTolerance?: number;
  /**
   * Grants revoked before their tokens expire (opt-in): a token whose `grant_id` is listed is
   * refused, cached or not. `createRedisRevocationList` (`@mcp-auth-kit/resource-server/redis`)
   * fills one from the AS's revocation signal; the lookup is in memory on every request.
   */
  revocation?: RevocationList;
  /** Validated-token cache (LRU keyed by SHA-256 of the token); `false` turns it off. */
  cache?: false | { maxEntries?: number };
  /** JWKS and metadata fetching. */
  jwks?: {
    /** Min time between refetches caused by an unknown `kid` (default 30 000 ms). */
    cooldownMs?: number;
    /** Max age of a fetched JWKS before it is refetched (default 600 000 ms). */
    cacheMaxAgeMs?: number;
    /** Timeout of each metadata and JWKS request (default 5 000 ms; introspection has its own). */
    timeoutMs?: number;
    /** How long a failed metadata discovery is remembered (default 5 000 ms). */
    failureCooldownMs?: number;
    /** Skip discovery: `{ [issuer]: jwksUri }`. */
    uris?: Readonly<Record<string, string>>;
  };
  /** RFC 7662 introspection for opaque tokens (and JWTs with `introspectJwt`); unset means opaque tokens are refused. */
  introspection?: IntrospectionOptions;
  /** Largest JSON body `protect` reads itself (default 4 MiB). */
  maxBodyBytes?: number;
  /** Receives rejection reasons and details (never tokens). */
  logger?: ResourceServerLogger;
  /** fetch used for metadata, JWKS and introspection (default global `fetch`). */
  fetch?: typeof fetch;
  /** Clock in ms (default `Date.now`); used for token times and cache expiry. */
  now?: () => number;
  /** RFC 9449 DPoP (sender-constrained tokens); `true` = defaults. Unset: Bearer only. */
  dpop?: boolean | DpopOptions;
  /** Third-party tokens for tool handlers (`thirdPartyToken`); unset: none. */
  thirdParty?: ThirdPartyOptions;
}

export interface ResolvedDpopOptions {
  required: boolean;
  algorithms: string[];
  maxAgeSeconds: number;
  clockToleranceSeconds: number;
  nonce: { secret: Uint8Array | undefined; lifetimeSeconds: number } | undefined;
  replay: { maxEntries: number } | DpopReplayStore;
  htu: string[];
}

export interface ResolvedOptions {
  resource: string;
  canonicalResource: string;
  resourceUrl: URL;
  authorizationServers: string[];
  scopesSupported: string[] | undefined;
  policy: ScopePolicy;
  /** `policy.default`, or none: what every request needs, and the 401 challenge's `scope`. */
  defaultScopes: readonly string[];
  hierarchy: ScopeHierarchy;
  challengeScopes: ChallengeScopeStrategy;
  knownScopes: Set<string>;
  allowedOrigins: Set<string>;
  allowedHosts: Set<string> | undefined;
  /** No `allowedHosts` and a loopback `resource`: only loopback host names pass. */
  loopbackHostsOnly: boolean;
  algorithms: string[];
  clockTolerance: number;
  cacheMaxEntries: number;
  jwks: { cooldownMs: number; cacheMaxAgeMs: number; timeoutMs: number; failureCooldownMs: number; uris: Record<string, string> };
  introspection: ResolvedIntrospectionOptions | undefined;
  maxBodyBytes: number;
  serveRootMetadata: boolean;
  logger: ResourceServerLogger | undefined;
  fetch: typeof fetch;
  now: () => number;
  /** Undefined when DPoP is off (Bearer only). */
  dpop: ResolvedDpopOptions | undefined;
  revocation: RevocationList | undefined;
  thirdParty: ResolvedThirdPartyOptions | undefined;
}

/** {@link IntrospectionOptions} with their defaults. */
export interface ResolvedIntrospectionOptions extends IntrospectionOptions {
  authMethod: 'client_secret_basic' | 'client_secret_post';
  cacheTtlSeconds: number;
  introspectJwt: boolean;
  timeoutMs: number;
}
