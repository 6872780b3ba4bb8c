/**
 * The one resolve step of the resource server's options (their types, defaults tree and schema
 * are beside it): the schema (shapes and ranges), then the rules that need a protocol predicate
 * or another option, then the options laid over the defaults tree. Every problem found comes back in one ConfigError, so one start-up shows
 * everything to fix; a check that needs an earlier value (the resource URL) is skipped when that
 * value is invalid (reported already). Features read the returned ResolvedOptions.
 */
import { canonicalResource, ConfigError, isLoopbackHost, isScopeToken } from '@mcp-auth-kit/protocol';
import { DEFAULT_ALGORITHMS } from '../verify-jwt.js';
import { normalizeHost, normalizeOrigin } from '../origin.js';
import { DEFAULT_DPOP_PROOF_ALGORITHMS, normalizeHtu } from '../dpop.js';
import { decodeNonceSecret } from '../dpop-nonce.js';
import { tokenEndpointProblem } from '../third-party/exchange.js';
import type { DpopReplayStore } from '../types.js';
import { DEFAULTS } from './defaults.js';
import { optionsSchema, schemaProblems, thirdPartySchema } from './schema.js';
import type {
  DpopOptions,
  IntrospectionOptions,
  ResolvedDpopOptions,
  ResolvedIntrospectionOptions,
  ResolvedOptions,
  ResolvedThirdPartyOptions,
  ResourceServerOptions,
  ScopeHierarchy,
  ScopePolicy,
  ThirdPartyOptions,
} from './types.js';

/** What {@link ConfigError}'s message names: "Invalid resource server configuration:". */
const CONFIG_SUBJECT = 'resource server';

/** The items of a list option; its shape is the schema's to report. */
const items = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
/** The fields `value` sets, to spread over their defaults (an explicit `undefined` keeps the default). */
function definedOnly<T extends object>(value: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** Each item of `value` that `normalize` refuses is one problem; the rest, normalized. */
function normalizeEach(problems: string[], name: string, what: string, value: unknown, normalize: (v: string) => string | undefined) {
  const normalized: string[] = [];
  for (const item of items(value)) {
    const n = typeof item === 'string' ? normalize(item) : undefined;
    if (n === undefined) problems.push(`${name} contains an invalid ${what}: ${JSON.stringify(item)}`);
    else normalized.push(n);
  }
  return normalized;
}

function checkResource(problems: string[], options: ResourceServerOptions): { canonical: string; url: URL } | undefined {
  const canonical = typeof options.resource === 'string' ? canonicalResource(options.resource) : undefined;
  if (canonical === undefined) {
    problems.push('resource must be an absolute http(s) URI without fragment or userinfo');
    return undefined;
  }
  const url = new URL(options.resource);
  if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) {
    options.logger?.warn?.('resource is not https; only acceptable behind a TLS-terminating proxy', { resource: options.resource });
  }
  return { canonical, url };
}

function checkIssuers(problems: string[], options: ResourceServerOptions): void {
  if (!Array.isArray(options.authorizationServers) || options.authorizationServers.length === 0) {
    problems.push('authorizationServers must list at least one issuer');
    return;
  }
  for (const issuer of options.authorizationServers) {
    if (typeof issuer !== 'string' || !URL.canParse(issuer) || issuer.includes('#') || issuer.includes('?')) {
      problems.push(`authorizationServers contains an invalid issuer: ${JSON.stringify(issuer)}`);
    } else if (new URL(issuer).protocol !== 'https:' && !isLoopbackHost(new URL(issuer).hostname)) {
      // MCP §Communication Security: authorization server endpoints MUST be served over HTTPS
      options.logger?.warn?.('authorization server issuer is not https', { issuer });
    }
  }
}

/** A list of scope tokens (RFC 6749 §3.3); unset is an empty list. */
function scopeList(problems: string[], name: string, value: unknown): string[] {
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

/** `scopesSupported`, and every scope the policy names (the 403 challenge may list only those). */
function resolveScopes(problems: string[], options: ResourceServerOptions) {
  const scopesSupported =
    options.scopesSupported === undefined ? undefined : scopeList(problems, 'scopesSupported', options.scopesSupported);
  if (scopesSupported?.includes('offline_access')) problems.push('scopesSupported must not contain offline_access (MCP §Refresh Tokens)');
  const policy: ScopePolicy = options.scopePolicy ?? DEFAULTS.scopePolicy;
  const knownScopes = new Set(scopesSupported);
  const defaultScopes = scopeList(problems, 'scopePolicy.default', policy.default);
  for (const s of defaultScopes) knownScopes.add(s);
  for (const [table, name] of [
    [policy.methods, 'scopePolicy.methods'],
    [policy.tools, 'scopePolicy.tools'],
  ] as const) {
    for (const [key, list] of Object.entries(table ?? {})) {
      for (const s of scopeList(problems, `${name}[${JSON.stringify(key)}]`, list)) knownScopes.add(s);
    }
  }
  if (knownScopes.has('offline_access')) problems.push('scopePolicy must not require offline_access (MCP §Refresh Tokens)');
  const hierarchy: ScopeHierarchy = options.scopeHierarchy ?? DEFAULTS.scopeHierarchy;
  for (const [key, list] of Object.entries(hierarchy)) scopeList(problems, `scopeHierarchy[${JSON.stringify(key)}]`, list);
  return { scopesSupported, policy, defaultScopes, hierarchy, knownScopes };
}

/** Only asymmetric JWS algorithms this package verifies (`allowed`); unset is all of them. */
function algorithmList(problems: string[], name: string, value: unknown, allowed: readonly string[]): string[] {
  if (value === undefined) return [...allowed];
  for (const alg of items(value)) {
    if (typeof alg !== 'string' || !allowed.includes(alg)) {
      problems.push(`${name}: ${JSON.stringify(alg)} is not allowed (asymmetric JWS algorithms only)`);
    }
  }
  return items(value) as string[];
}

/** `allowedOrigins` (default: the resource's origin, known only when the resource is valid) and `allowedHosts`. */
function resolveOriginsAndHosts(problems: string[], options: ResourceServerOptions, resourceUrl: URL | undefined) {
  const origins = options.allowedOrigins ?? (resourceUrl === undefined ? [] : [resourceUrl.origin]);
  const allowedOrigins = new Set(normalizeEach(problems, 'allowedOrigins', 'origin', origins, normalizeOrigin));
  if (options.allowedHosts === undefined) return { allowedOrigins, allowedHosts: undefined };
  // The scheme only decides which default port is dropped, not whether a host is valid.
  const scheme = resourceUrl?.protocol === 'http:' ? 'http:' : 'https:';
  const hosts = normalizeEach(problems, 'allowedHosts', 'host', options.allowedHosts, (host) => normalizeHost(host, scheme));
  return { allowedOrigins, allowedHosts: new Set(hosts) };
}

function resolveDpop(problems: string[], input: unknown, resource: string | undefined): ResolvedDpopOptions | undefined {
  if (input !== true && !isObject(input)) return undefined;
  const o: DpopOptions = input === true ? {} : input;
  const d = DEFAULTS.dpop;
  let nonce: ResolvedDpopOptions['nonce'];
  if (o.nonce === true || isObject(o.nonce)) {
    const n = o.nonce === true ? {} : o.nonce;
    const given = n.secret;
    const secret = typeof given === 'string' || given instanceof Uint8Array ? decodeNonceSecret(given) : undefined;
    if (n.secret !== undefined && secret === undefined) problems.push('dpop.nonce.secret must be 32 bytes (or their base64url encoding)');
    nonce = { secret, lifetimeSeconds: n.lifetimeSeconds ?? d.nonce.lifetimeSeconds };
  }
  const store = o.replay as DpopReplayStore | undefined;
  const replay =
    typeof store?.add === 'function' ? store : { maxEntries: (o.replay as { maxEntries?: number })?.maxEntries ?? d.replay.maxEntries };
  // The default is the resource: nothing to check when that is invalid (reported already).
  const urls =
    o.publicUrl === undefined ? (resource === undefined ? [] : [resource]) : typeof o.publicUrl === 'string' ? [o.publicUrl] : o.publicUrl;
  return {
    required: o.required ?? d.required,
    algorithms: algorithmList(problems, 'dpop.algorithms', o.algorithms, DEFAULT_DPOP_PROOF_ALGORITHMS),
    maxAgeSeconds: o.maxAgeSeconds ?? d.maxAgeSeconds,
    clockToleranceSeconds: o.clockToleranceSeconds ?? d.clockToleranceSeconds,
    nonce,
    replay,
    htu: normalizeEach(problems, 'dpop.publicUrl', 'URL', urls, normalizeHtu),
  };
}

function resolveIntrospection(input: IntrospectionOptions | undefined): ResolvedIntrospectionOptions | undefined {
  if (input === undefined) return undefined;
  return { ...DEFAULTS.introspection, ...definedOnly(input) } as ResolvedIntrospectionOptions;
}

/**
 * Checks {@link ThirdPartyOptions} (`name`: how the problems name them, e.g. `thirdParty`; `''`
 * for `createThirdPartyTokens`, whose schema check is its own).
 */
export function resolveThirdParty(problems: string[], name: string, input: ThirdPartyOptions): ResolvedThirdPartyOptions {
  const prefix = name === '' ? '' : `${name}.`;
  if (name === '') problems.push(...schemaProblems(thirdPartySchema, input));
  const o: Partial<ThirdPartyOptions> = isObject(input) ? input : {};
  if (o.tokenEndpoint !== undefined) {
    const problem = tokenEndpointProblem(o.tokenEndpoint);
    if (problem !== undefined) problems.push(`${prefix}tokenEndpoint ${problem}`);
  }
  const d = DEFAULTS.thirdParty;
  return {
    clientId: o.clientId as string,
    clientSecret: o.clientSecret as string,
    authMethod: o.authMethod ?? d.authMethod,
    tokenEndpoint: o.tokenEndpoint,
    timeoutMs: o.timeoutMs ?? d.timeoutMs,
    cacheMaxEntries: o.cache === false ? 0 : (o.cache?.maxEntries ?? d.cache.maxEntries),
    expirySkewSeconds: o.expirySkewSeconds ?? d.expirySkewSeconds,
  };
}

/**
 * Checks options once, at startup (a bad configuration never reaches a request), and returns
 * them over the defaults tree.
 * @throws {ConfigError} listing every problem found
 */
export function resolveOptions(options: ResourceServerOptions): ResolvedOptions {
  if (!isObject(options)) throw new ConfigError(['options are required'], CONFIG_SUBJECT);
  const problems: string[] = [];
  const resource = checkResource(problems, options);
  checkIssuers(problems, options);
  problems.push(...schemaProblems(optionsSchema, options));
  const scopes = resolveScopes(problems, options);
  const algorithms = algorithmList(problems, 'algorithms', options.algorithms, DEFAULT_ALGORITHMS);
  const { allowedOrigins, allowedHosts } = resolveOriginsAndHosts(problems, options, resource?.url);
  const dpop = resolveDpop(problems, options.dpop, resource === undefined ? undefined : options.resource);
  const thirdParty = options.thirdParty === undefined ? undefined : resolveThirdParty(problems, 'thirdParty', options.thirdParty);
  if (problems.length > 0 || resource === undefined) throw new ConfigError(problems, CONFIG_SUBJECT);
  const d = DEFAULTS;
  return {
    resource: options.resource,
    canonicalResource: resource.canonical,
    resourceUrl: resource.url,
    authorizationServers: [...options.authorizationServers],
    ...scopes,
    challengeScopes: options.challengeScopes ?? d.challengeScopes,
    allowedOrigins,
    allowedHosts,
    loopbackHostsOnly: allowedHosts === undefined && isLoopbackHost(resource.url.hostname),
    algorithms,
    clockTolerance: options.clockTolerance ?? d.clockTolerance,
    cacheMaxEntries: options.cache === false ? 0 : (options.cache?.maxEntries ?? d.cache.maxEntries),
    jwks: { ...d.jwks, ...definedOnly(options.jwks), uris: { ...options.jwks?.uris } },
    introspection: resolveIntrospection(options.introspection),
    maxBodyBytes: options.maxBodyBytes ?? d.maxBodyBytes,
    serveRootMetadata: options.serveRootMetadata ?? d.serveRootMetadata,
    logger: options.logger,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    now: options.now ?? Date.now,
    dpop,
    revocation: options.revocation,
    thirdParty,
  };
}
