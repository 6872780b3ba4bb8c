import { DEFAULT_ALGORITHMS } from './verify_jwt.js';
import { canonicalResource, isLoopbackHost, isScopeToken } from '@mcp-auth-kit/protocol';
import { normalizeHost, normalizeOrigin } from './origin.js';
import type { IntrospectionOptions } from './introspection.js';
import type { ChallengeScopeStrategy, ScopeHierarchy, ScopePolicy } from './scope_policy.js';
import type { ResourceServerLogger } from './types.js';
import { DEFAULT_DPOP_ALGORITHMS, normalizeHtu } from './dpop.js';
import { decodeNonceSecret } from './dpop_nonce.js';
import type { DpopReplayStore } from './dpop_replay.js';

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
  /** Validated-token cache (LRU keyed by SHA-256 of the token); `false` turns it off. */
  cache?: false | { maxEntries?: number };
  /** JWKS and metadata fetching. */
  jwks?: {
    /** Min time between refetches caused by an unknown `kid` (default 30 000 ms). */
    cooldownMs?: number;
    /** Max age of a fetched JWKS before it is refetched (default 600 000 ms). */
    cacheMaxAgeMs?: number;
    /** Timeout of each metadata/JWKS/introspection request (default 5 000 ms). */
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
  introspection: IntrospectionOptions | undefined;
  maxBodyBytes: number;
  serveRootMetadata: boolean;
  logger: ResourceServerLogger | undefined;
  fetch: typeof fetch;
  now: () => number;
  /** Undefined when DPoP is off (Bearer only). */
  dpop: ResolvedDpopOptions | undefined;
}

function invalid(message: string): TypeError {
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_VALUE' });
}

function scopeList(name: string, value: readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid(`${name} must be an array of scope strings`);
  for (const s of value) {
    if (typeof s !== 'string' || !isScopeToken(s)) throw invalid(`${name} contains an invalid scope: ${JSON.stringify(s)}`);
  }
  return [...value];
}

function nonNegative(name: string, value: number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    throw invalid(`${name} must be a number between 0 and ${max}`);
  }
  return value;
}

function resolveDpop(input: boolean | DpopOptions | undefined, resource: string): ResolvedDpopOptions | undefined {
  if (input === undefined || input === false) return undefined;
  if (input !== true && (typeof input !== 'object' || input === null)) throw invalid('dpop must be a boolean or an object');
  const o: DpopOptions = input === true ? {} : input;
  const algorithms = o.algorithms === undefined ? [...DEFAULT_DPOP_ALGORITHMS] : [...o.algorithms];
  if (algorithms.length === 0) throw invalid('dpop.algorithms must not be empty');
  for (const alg of algorithms) {
    if (!DEFAULT_DPOP_ALGORITHMS.includes(alg)) {
      throw invalid(`dpop.algorithms: ${JSON.stringify(alg)} is not allowed (asymmetric JWS algorithms only)`);
    }
  }
  let nonce: ResolvedDpopOptions['nonce'];
  if (o.nonce !== undefined && o.nonce !== false) {
    const n = o.nonce === true ? {} : o.nonce;
    let secret: Uint8Array | undefined;
    if (n.secret !== undefined) {
      secret = decodeNonceSecret(n.secret);
      if (secret === undefined) throw invalid('dpop.nonce.secret must be 32 bytes (or their base64url encoding)');
    }
    nonce = { secret, lifetimeSeconds: nonNegative('dpop.nonce.lifetimeSeconds', n.lifetimeSeconds, 300, 3600) };
  }
  let replay: ResolvedDpopOptions['replay'];
  if (o.replay !== undefined && typeof (o.replay as DpopReplayStore).add === 'function') {
    replay = o.replay as DpopReplayStore;
  } else {
    const maxEntries = nonNegative('dpop.replay.maxEntries', (o.replay as { maxEntries?: number } | undefined)?.maxEntries, 100_000);
    if (maxEntries < 1) throw invalid('dpop.replay.maxEntries must be at least 1');
    replay = { maxEntries };
  }
  const urls = o.publicUrl === undefined ? [resource] : typeof o.publicUrl === 'string' ? [o.publicUrl] : [...o.publicUrl];
  const htu: string[] = [];
  for (const url of urls) {
    const normalized = typeof url === 'string' ? normalizeHtu(url) : undefined;
    if (normalized === undefined) throw invalid(`dpop.publicUrl contains an invalid URL: ${JSON.stringify(url)}`);
    htu.push(normalized);
  }
  if (htu.length === 0) throw invalid('dpop.publicUrl must not be empty');
  return {
    required: o.required === true,
    algorithms,
    maxAgeSeconds: nonNegative('dpop.maxAgeSeconds', o.maxAgeSeconds, 60, 600),
    clockToleranceSeconds: nonNegative('dpop.clockToleranceSeconds', o.clockToleranceSeconds, 5, 300),
    nonce,
    replay,
    htu,
  };
}

/** Checks options once, at startup (a bad configuration never reaches a request). */
export function resolveOptions(options: ResourceServerOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw invalid('options are required');
  const canonical = typeof options.resource === 'string' ? canonicalResource(options.resource) : undefined;
  if (canonical === undefined) {
    throw invalid('resource must be an absolute http(s) URI without fragment or userinfo');
  }
  const resourceUrl = new URL(options.resource);
  if (resourceUrl.protocol !== 'https:' && !isLoopbackHost(resourceUrl.hostname)) {
    options.logger?.warn?.('resource is not https; only acceptable behind a TLS-terminating proxy', {
      resource: options.resource,
    });
  }
  if (!Array.isArray(options.authorizationServers) || options.authorizationServers.length === 0) {
    throw invalid('authorizationServers must list at least one issuer');
  }
  for (const issuer of options.authorizationServers) {
    if (typeof issuer !== 'string' || !URL.canParse(issuer) || issuer.includes('#') || issuer.includes('?')) {
      throw invalid(`authorizationServers contains an invalid issuer: ${JSON.stringify(issuer)}`);
    }
  }
  for (const issuer of options.authorizationServers) {
    const url = new URL(issuer);
    if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) {
      // MCP §Communication Security: authorization server endpoints MUST be served over HTTPS
      options.logger?.warn?.('authorization server issuer is not https', { issuer });
    }
  }
  const scopesSupported =
    options.scopesSupported === undefined ? undefined : scopeList('scopesSupported', options.scopesSupported);
  if (scopesSupported?.includes('offline_access')) {
    throw invalid('scopesSupported must not contain offline_access (MCP §Refresh Tokens)');
  }
  const policy = options.scopePolicy ?? {};
  const knownScopes = new Set(scopesSupported ?? []);
  for (const s of scopeList('scopePolicy.default', policy.default)) knownScopes.add(s);
  for (const [table, name] of [
    [policy.methods, 'scopePolicy.methods'],
    [policy.tools, 'scopePolicy.tools'],
  ] as const) {
    for (const [key, list] of Object.entries(table ?? {})) {
      for (const s of scopeList(`${name}[${JSON.stringify(key)}]`, list)) knownScopes.add(s);
    }
  }
  if (knownScopes.has('offline_access')) {
    throw invalid('scopePolicy must not require offline_access (MCP §Refresh Tokens)');
  }
  const hierarchy = options.scopeHierarchy ?? {};
  for (const [key, list] of Object.entries(hierarchy)) scopeList(`scopeHierarchy[${JSON.stringify(key)}]`, list);

  const algorithms = options.algorithms === undefined ? [...DEFAULT_ALGORITHMS] : [...options.algorithms];
  if (algorithms.length === 0) throw invalid('algorithms must not be empty');
  for (const alg of algorithms) {
    if (!DEFAULT_ALGORITHMS.includes(alg)) {
      throw invalid(`algorithm ${JSON.stringify(alg)} is not allowed (asymmetric JWS algorithms only)`);
    }
  }

  const allowedOrigins = new Set<string>();
  for (const origin of options.allowedOrigins ?? [resourceUrl.origin]) {
    const normalized = typeof origin === 'string' ? normalizeOrigin(origin) : undefined;
    if (normalized === undefined) throw invalid(`allowedOrigins contains an invalid origin: ${JSON.stringify(origin)}`);
    allowedOrigins.add(normalized);
  }
  let allowedHosts: Set<string> | undefined;
  if (options.allowedHosts !== undefined) {
    allowedHosts = new Set();
    for (const host of options.allowedHosts) {
      const normalized = typeof host === 'string' ? normalizeHost(host, resourceUrl.protocol as 'http:' | 'https:') : undefined;
      if (normalized === undefined) throw invalid(`allowedHosts contains an invalid host: ${JSON.stringify(host)}`);
      allowedHosts.add(normalized);
    }
  }

  const introspection = options.introspection;
  if (introspection !== undefined) {
    if (typeof introspection.endpoint !== 'string' || !URL.canParse(introspection.endpoint)) {
      throw invalid('introspection.endpoint must be a URL');
    }
    if (typeof introspection.clientId !== 'string' || typeof introspection.clientSecret !== 'string') {
      throw invalid('introspection.clientId and introspection.clientSecret are required');
    }
    if (introspection.introspectJwt !== undefined && typeof introspection.introspectJwt !== 'boolean') {
      throw invalid('introspection.introspectJwt must be a boolean');
    }
  }
  if (options.resourceDocumentation !== undefined && !URL.canParse(options.resourceDocumentation)) {
    throw invalid('resourceDocumentation must be a URL');
  }

  return {
    resource: options.resource,
    canonicalResource: canonical,
    resourceUrl,
    authorizationServers: [...options.authorizationServers],
    scopesSupported,
    policy,
    hierarchy,
    challengeScopes: options.challengeScopes ?? 'required',
    knownScopes,
    allowedOrigins,
    allowedHosts,
    loopbackHostsOnly: allowedHosts === undefined && isLoopbackHost(resourceUrl.hostname),
    algorithms,
    clockTolerance: nonNegative('clockTolerance', options.clockTolerance, 30, 300),
    cacheMaxEntries: options.cache === false ? 0 : nonNegative('cache.maxEntries', options.cache?.maxEntries, 1000),
    jwks: {
      cooldownMs: nonNegative('jwks.cooldownMs', options.jwks?.cooldownMs, 30_000),
      cacheMaxAgeMs: nonNegative('jwks.cacheMaxAgeMs', options.jwks?.cacheMaxAgeMs, 600_000),
      timeoutMs: nonNegative('jwks.timeoutMs', options.jwks?.timeoutMs, 5_000),
      failureCooldownMs: nonNegative('jwks.failureCooldownMs', options.jwks?.failureCooldownMs, 5_000),
      uris: { ...(options.jwks?.uris ?? {}) },
    },
    introspection,
    maxBodyBytes: nonNegative('maxBodyBytes', options.maxBodyBytes, 4 * 1024 * 1024),
    serveRootMetadata: options.serveRootMetadata ?? true,
    logger: options.logger,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    now: options.now ?? Date.now,
    dpop: resolveDpop(options.dpop, options.resource),
  };
}
