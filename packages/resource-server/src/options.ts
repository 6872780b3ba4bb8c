import { DEFAULT_ALGORITHMS } from './verify-jwt.js';
import { canonicalResource, ConfigError, isLoopbackHost, isScopeToken } from '@mcp-auth-kit/protocol';
import { normalizeHost, normalizeOrigin } from './origin.js';
import type { IntrospectionOptions } from './introspection.js';
import type { ChallengeScopeStrategy, ScopeHierarchy, ScopePolicy } from './scope-policy.js';
import type { ResourceServerLogger } from './types.js';
import { DEFAULT_DPOP_PROOF_ALGORITHMS, normalizeHtu } from './dpop.js';
import { decodeNonceSecret } from './dpop-nonce.js';
import type { DpopReplayStore } from './dpop-replay.js';
import type { RevocationList } from './revocation.js';
import { tokenEndpointProblem } from './third-party/exchange.js';

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
  revocation: RevocationList | undefined;
  thirdParty: ResolvedThirdPartyOptions | undefined;
}

/** What {@link ConfigError}'s message names: "Invalid resource server configuration:". */
const CONFIG_SUBJECT = 'resource server';

// Every check below records its problem and goes on with a fallback, so one ConfigError lists
// them all; a check that needs an earlier value (the resource URL) is skipped when it is invalid.

function scopeList(problems: string[], name: string, value: readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(`${name} must be an array of scope strings`);
    return [];
  }
  for (const s of value) {
    if (typeof s !== 'string' || !isScopeToken(s)) problems.push(`${name} contains an invalid scope: ${JSON.stringify(s)}`);
  }
  return [...value];
}

/** The items of a list option (none, after recording the problem, when it is not an array). */
function arrayOf(problems: string[], name: string, value: unknown): unknown[] {
  if (!Array.isArray(value)) {
    problems.push(`${name} must be an array`);
    return [];
  }
  return [...value];
}

function nonNegative(problems: string[], name: string, value: number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    problems.push(`${name} must be a number between 0 and ${max}`);
    return fallback;
  }
  return value;
}

function algorithmList(problems: string[], name: string, value: readonly string[] | undefined, allowed: readonly string[]): string[] {
  if (value === undefined) return [...allowed];
  const algorithms = arrayOf(problems, name, value);
  if (Array.isArray(value) && algorithms.length === 0) problems.push(`${name} must not be empty`);
  for (const alg of algorithms) {
    if (typeof alg !== 'string' || !allowed.includes(alg)) {
      problems.push(`${name}: ${JSON.stringify(alg)} is not allowed (asymmetric JWS algorithms only)`);
    }
  }
  return algorithms as string[];
}

function resolveDpop(
  problems: string[],
  input: boolean | DpopOptions | undefined,
  resource: string | undefined,
): ResolvedDpopOptions | undefined {
  if (input === undefined || input === false) return undefined;
  if (input !== true && (typeof input !== 'object' || input === null)) {
    problems.push('dpop must be a boolean or an object');
    return undefined;
  }
  const o: DpopOptions = input === true ? {} : input;
  const algorithms = algorithmList(problems, 'dpop.algorithms', o.algorithms, DEFAULT_DPOP_PROOF_ALGORITHMS);
  let nonce: ResolvedDpopOptions['nonce'];
  if (o.nonce !== undefined && o.nonce !== false) {
    const n = o.nonce === true ? {} : o.nonce;
    let secret: Uint8Array | undefined;
    if (n.secret !== undefined) {
      secret = decodeNonceSecret(n.secret);
      if (secret === undefined) problems.push('dpop.nonce.secret must be 32 bytes (or their base64url encoding)');
    }
    nonce = { secret, lifetimeSeconds: nonNegative(problems, 'dpop.nonce.lifetimeSeconds', n.lifetimeSeconds, 300, 3600) };
  }
  let replay: ResolvedDpopOptions['replay'];
  if (o.replay !== undefined && typeof (o.replay as DpopReplayStore).add === 'function') {
    replay = o.replay as DpopReplayStore;
  } else {
    const maxEntries = nonNegative(
      problems,
      'dpop.replay.maxEntries',
      (o.replay as { maxEntries?: number } | undefined)?.maxEntries,
      100_000,
    );
    if (maxEntries < 1) problems.push('dpop.replay.maxEntries must be at least 1');
    replay = { maxEntries };
  }
  // The default is the resource: nothing to check when that is invalid (reported already).
  const urls =
    o.publicUrl === undefined
      ? resource === undefined
        ? []
        : [resource]
      : typeof o.publicUrl === 'string'
        ? [o.publicUrl]
        : arrayOf(problems, 'dpop.publicUrl', o.publicUrl);
  if (Array.isArray(o.publicUrl) && urls.length === 0) problems.push('dpop.publicUrl must not be empty');
  const htu: string[] = [];
  for (const url of urls) {
    const normalized = typeof url === 'string' ? normalizeHtu(url) : undefined;
    if (normalized === undefined) problems.push(`dpop.publicUrl contains an invalid URL: ${JSON.stringify(url)}`);
    else htu.push(normalized);
  }
  return {
    required: o.required === true,
    algorithms,
    maxAgeSeconds: nonNegative(problems, 'dpop.maxAgeSeconds', o.maxAgeSeconds, 60, 600),
    clockToleranceSeconds: nonNegative(problems, 'dpop.clockToleranceSeconds', o.clockToleranceSeconds, 5, 300),
    nonce,
    replay,
    htu,
  };
}

/**
 * Checks {@link ThirdPartyOptions} (`name`: how the problems name them, e.g. `thirdParty`); shared
 * by the middleware option and `createThirdPartyTokens`.
 */
export function resolveThirdParty(problems: string[], name: string, input: ThirdPartyOptions): ResolvedThirdPartyOptions {
  const prefix = name === '' ? '' : `${name}.`;
  if (typeof input !== 'object' || input === null) {
    problems.push(`${name || 'options'} must be an object`);
    input = {} as ThirdPartyOptions;
  }
  for (const key of ['clientId', 'clientSecret'] as const) {
    if (typeof input[key] !== 'string' || input[key] === '') problems.push(`${prefix}${key} must be a non-empty string`);
  }
  if (input.authMethod !== undefined && input.authMethod !== 'client_secret_basic' && input.authMethod !== 'client_secret_post') {
    problems.push(`${prefix}authMethod must be client_secret_basic or client_secret_post`);
  }
  if (input.tokenEndpoint !== undefined) {
    const problem = tokenEndpointProblem(input.tokenEndpoint);
    if (problem !== undefined) problems.push(`${prefix}tokenEndpoint ${problem}`);
  }
  const timeoutMs = nonNegative(problems, `${prefix}timeoutMs`, input.timeoutMs, 10_000, 60_000);
  if (timeoutMs < 1) problems.push(`${prefix}timeoutMs must be at least 1`);
  return {
    clientId: input.clientId,
    clientSecret: input.clientSecret,
    authMethod: input.authMethod ?? 'client_secret_basic',
    tokenEndpoint: input.tokenEndpoint,
    timeoutMs,
    cacheMaxEntries: input.cache === false ? 0 : nonNegative(problems, `${prefix}cache.maxEntries`, input.cache?.maxEntries, 1000),
    expirySkewSeconds: nonNegative(problems, `${prefix}expirySkewSeconds`, input.expirySkewSeconds, 30, 3600),
  };
}

/**
 * Checks options once, at startup (a bad configuration never reaches a request).
 * @throws {ConfigError} listing every problem found
 */
export function resolveOptions(options: ResourceServerOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new ConfigError(['options are required'], CONFIG_SUBJECT);
  const problems: string[] = [];
  const canonical = typeof options.resource === 'string' ? canonicalResource(options.resource) : undefined;
  let resourceUrl: URL | undefined;
  if (canonical === undefined) {
    problems.push('resource must be an absolute http(s) URI without fragment or userinfo');
  } else {
    resourceUrl = new URL(options.resource);
    if (resourceUrl.protocol !== 'https:' && !isLoopbackHost(resourceUrl.hostname)) {
      options.logger?.warn?.('resource is not https; only acceptable behind a TLS-terminating proxy', {
        resource: options.resource,
      });
    }
  }
  if (!Array.isArray(options.authorizationServers) || options.authorizationServers.length === 0) {
    problems.push('authorizationServers must list at least one issuer');
  } else {
    for (const issuer of options.authorizationServers) {
      if (typeof issuer !== 'string' || !URL.canParse(issuer) || issuer.includes('#') || issuer.includes('?')) {
        problems.push(`authorizationServers contains an invalid issuer: ${JSON.stringify(issuer)}`);
        continue;
      }
      const url = new URL(issuer);
      if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) {
        // MCP §Communication Security: authorization server endpoints MUST be served over HTTPS
        options.logger?.warn?.('authorization server issuer is not https', { issuer });
      }
    }
  }
  const scopesSupported =
    options.scopesSupported === undefined ? undefined : scopeList(problems, 'scopesSupported', options.scopesSupported);
  if (scopesSupported?.includes('offline_access')) {
    problems.push('scopesSupported must not contain offline_access (MCP §Refresh Tokens)');
  }
  const policy = options.scopePolicy ?? {};
  const knownScopes = new Set(scopesSupported ?? []);
  for (const s of scopeList(problems, 'scopePolicy.default', policy.default)) knownScopes.add(s);
  for (const [table, name] of [
    [policy.methods, 'scopePolicy.methods'],
    [policy.tools, 'scopePolicy.tools'],
  ] as const) {
    for (const [key, list] of Object.entries(table ?? {})) {
      for (const s of scopeList(problems, `${name}[${JSON.stringify(key)}]`, list)) knownScopes.add(s);
    }
  }
  if (knownScopes.has('offline_access')) {
    problems.push('scopePolicy must not require offline_access (MCP §Refresh Tokens)');
  }
  const hierarchy = options.scopeHierarchy ?? {};
  for (const [key, list] of Object.entries(hierarchy)) scopeList(problems, `scopeHierarchy[${JSON.stringify(key)}]`, list);

  const algorithms = algorithmList(problems, 'algorithms', options.algorithms, DEFAULT_ALGORITHMS);

  const allowedOrigins = new Set<string>();
  // The default, the resource's origin, is known only when the resource is valid.
  const origins =
    options.allowedOrigins !== undefined
      ? arrayOf(problems, 'allowedOrigins', options.allowedOrigins)
      : resourceUrl !== undefined
        ? [resourceUrl.origin]
        : [];
  for (const origin of origins) {
    const normalized = typeof origin === 'string' ? normalizeOrigin(origin) : undefined;
    if (normalized === undefined) problems.push(`allowedOrigins contains an invalid origin: ${JSON.stringify(origin)}`);
    else allowedOrigins.add(normalized);
  }
  let allowedHosts: Set<string> | undefined;
  if (options.allowedHosts !== undefined) {
    allowedHosts = new Set();
    // The scheme only decides which default port is dropped, not whether a host is valid.
    const scheme = resourceUrl?.protocol === 'http:' ? 'http:' : 'https:';
    for (const host of arrayOf(problems, 'allowedHosts', options.allowedHosts)) {
      const normalized = typeof host === 'string' ? normalizeHost(host, scheme) : undefined;
      if (normalized === undefined) problems.push(`allowedHosts contains an invalid host: ${JSON.stringify(host)}`);
      else allowedHosts.add(normalized);
    }
  }

  const introspection = options.introspection;
  if (introspection !== undefined) {
    if (typeof introspection.endpoint !== 'string' || !URL.canParse(introspection.endpoint)) {
      problems.push('introspection.endpoint must be a URL');
    }
    if (typeof introspection.clientId !== 'string' || typeof introspection.clientSecret !== 'string') {
      problems.push('introspection.clientId and introspection.clientSecret are required');
    }
    if (introspection.introspectJwt !== undefined && typeof introspection.introspectJwt !== 'boolean') {
      problems.push('introspection.introspectJwt must be a boolean');
    }
    if (
      introspection.timeoutMs !== undefined &&
      !(
        typeof introspection.timeoutMs === 'number' &&
        Number.isFinite(introspection.timeoutMs) &&
        introspection.timeoutMs > 0 &&
        introspection.timeoutMs <= 60_000
      )
    ) {
      problems.push('introspection.timeoutMs must be a number of milliseconds between 1 and 60000');
    }
  }
  if (options.resourceDocumentation !== undefined && !URL.canParse(options.resourceDocumentation)) {
    problems.push('resourceDocumentation must be a URL');
  }

  const clockTolerance = nonNegative(problems, 'clockTolerance', options.clockTolerance, 30, 300);
  const cacheMaxEntries = options.cache === false ? 0 : nonNegative(problems, 'cache.maxEntries', options.cache?.maxEntries, 1000);
  const jwks = {
    cooldownMs: nonNegative(problems, 'jwks.cooldownMs', options.jwks?.cooldownMs, 30_000),
    cacheMaxAgeMs: nonNegative(problems, 'jwks.cacheMaxAgeMs', options.jwks?.cacheMaxAgeMs, 600_000),
    timeoutMs: nonNegative(problems, 'jwks.timeoutMs', options.jwks?.timeoutMs, 5_000),
    failureCooldownMs: nonNegative(problems, 'jwks.failureCooldownMs', options.jwks?.failureCooldownMs, 5_000),
    uris: { ...(options.jwks?.uris ?? {}) },
  };
  const maxBodyBytes = nonNegative(problems, 'maxBodyBytes', options.maxBodyBytes, 4 * 1024 * 1024);
  const dpop = resolveDpop(problems, options.dpop, canonical === undefined ? undefined : options.resource);
  if (options.revocation !== undefined && typeof options.revocation?.isRevoked !== 'function') {
    problems.push('revocation must have an isRevoked(grantId) method');
  }

  const thirdParty = options.thirdParty === undefined ? undefined : resolveThirdParty(problems, 'thirdParty', options.thirdParty);

  // (`canonical`/`resourceUrl` are set whenever no problem was found; the test narrows their types.)
  if (problems.length > 0 || canonical === undefined || resourceUrl === undefined) throw new ConfigError(problems, CONFIG_SUBJECT);
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
    clockTolerance,
    cacheMaxEntries,
    jwks,
    introspection,
    maxBodyBytes,
    serveRootMetadata: options.serveRootMetadata ?? true,
    logger: options.logger,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    now: options.now ?? Date.now,
    dpop,
    revocation: options.revocation,
    thirdParty,
  };
}
