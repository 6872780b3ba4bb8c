/**
 * The one resolve step of the authorization server's configuration: checks it (the schema,
 * then the rules each feature module owns, storage included) and lays it over the defaults
 * tree. Every problem found comes back in one ConfigError, so one start-up shows everything to
 * fix. Features read the returned ResolvedConfig and restate no default.
 */
import { trustProxyProblem } from '../http/client-address.js';
import { ConfigError, extraSchemeProblem, isLoopbackHost, isScopeToken } from '@mcp-auth-kit/protocol';
import type { AuthorizationServerConfig, ClientMetadata, ResolvedConfig, ResolvedIdJagConfig, ResolvedThirdPartyConfig } from './types.js';
import { DEFAULTS, DEFAULT_SCOPE_DESCRIPTIONS } from './defaults.js';
import { schemaProblems } from './schema.js';
import { isValidResourceIndicator, parseUrl } from '../http/urls.js';
import { dpopConfigProblems } from '../tokens/dpop.js';
import { upstreamConfigProblems } from '../upstream/config.js';
import { productionProblems } from '../ops/production.js';
import { behindProxy, DEV_SWITCHES, devSwitchProblems } from '../ops/dev-switches.js';
import { refreshGraceConfigProblems } from '../tokens/refresh-grace.js';
import { applyMetadataPolicy, DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD } from '../clients/client-metadata-policy.js';
import { scopeTextConfigProblems } from '../interactions/scope-text.js';
import { idJagConfigProblems } from '../grants/jwt-bearer/config.js';
import { storageProblems } from '../storage/config.js';
import { clientResourceProblems, thirdPartyConfigProblems } from '../third-party/config.js';

/** What {@link ConfigError}'s message names: "Invalid authorization server configuration:". */
export const CONFIG_SUBJECT = 'authorization server';

const RESERVED_SCOPES = new Set(['openid', 'offline_access', 'profile', 'email', 'address', 'phone']);

type LooseOptions = Partial<AuthorizationServerConfig>;

function issuerProblems(issuer: unknown): string[] {
  const url = typeof issuer === 'string' ? parseUrl(issuer) : undefined;
  if (!url) return ['issuer: must be an absolute URL, e.g. "https://auth.example.com"'];
  const text = issuer as string;
  const problems: string[] = [];
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    problems.push(
      `issuer: must use https (http is only allowed for loopback hosts), got "${text}"; use the public https URL (terminate TLS at a proxy and set trustProxy / TRUST_PROXY=1)`,
    );
  }
  if (url.search || url.hash || text.includes('?') || text.includes('#')) {
    problems.push('issuer: must not contain a query or fragment (RFC 8414 §2)');
  }
  // `https://user:pass@host` (or a bare `@`): credentials in the issuer would be published in
  // the metadata and compared by every client; RFC 8414 §2 names scheme, host, port and path only.
  if (url.username || url.password || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(text)) {
    problems.push('issuer: must not contain user information (credentials) before the host (RFC 8414 §2); remove "user:password@"');
  }
  if (text.endsWith('/')) problems.push('issuer: must not end with "/"');
  return problems;
}

/** A resource's `introspectionClients` must name pre-registered clients that authenticate. */
function introspectionClientProblems(where: string, ids: unknown, clients: unknown): string[] {
  if (ids === undefined) return [];
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string' || !id))
    return [`${where}.introspectionClients: must be an array of client_id strings`];
  const registered = Array.isArray(clients) ? (clients as Array<Partial<ClientMetadata> | undefined>) : [];
  const problems: string[] = [];
  for (const id of ids as string[]) {
    const client = registered.find((c) => c?.client_id === id);
    if (!client) problems.push(`${where}.introspectionClients: "${id}" is not a pre-registered client (clients[])`);
    else if (client.token_endpoint_auth_method === 'none') {
      problems.push(`${where}.introspectionClients: "${id}" is a public client; introspection needs client authentication (RFC 7662 §2.1)`);
    }
  }
  return problems;
}

function scopeProblems(where: string, scopes: unknown): string[] {
  if (!scopes || typeof scopes !== 'object' || Object.keys(scopes).length === 0)
    return [`${where}.scopes: must map at least one scope to its description`];
  const problems: string[] = [];
  for (const [scope, description] of Object.entries(scopes)) {
    if (!isScopeToken(scope)) problems.push(`${where}.scopes: "${scope}" is not a valid scope token (RFC 6749 §3.3)`);
    if (RESERVED_SCOPES.has(scope)) problems.push(`${where}.scopes: "${scope}" is reserved for OpenID Connect`);
    if (typeof description !== 'string') problems.push(`${where}.scopes.${scope}: description must be a string`);
  }
  return problems;
}

function resourceProblems(c: LooseOptions): string[] {
  if (!Array.isArray(c.resources) || c.resources.length === 0) return ['resources: at least one protected resource is required'];
  const problems: string[] = [];
  const seen = new Set<string>();
  c.resources.forEach((r, i) => {
    const where = `resources[${i}]`;
    if (!r || typeof r.resource !== 'string' || !isValidResourceIndicator(r.resource)) {
      problems.push(`${where}.resource: must be an absolute http(s) URI without a fragment (RFC 8707 §2)`);
      return;
    }
    if (seen.has(r.resource)) problems.push(`${where}.resource: duplicate "${r.resource}"`);
    seen.add(r.resource);
    problems.push(...scopeProblems(where, r.scopes));
    if (r.defaultScopes !== undefined && (!Array.isArray(r.defaultScopes) || r.defaultScopes.some((d) => !r.scopes || !(d in r.scopes)))) {
      problems.push(`${where}.defaultScopes: must list scopes of this resource`);
    }
    problems.push(...introspectionClientProblems(where, r.introspectionClients, c.clients));
  });
  return problems;
}

function redirectSchemeProblems(redirectUris: unknown): string[] {
  const extraSchemes = (redirectUris as { extraSchemes?: unknown } | undefined)?.extraSchemes;
  if (extraSchemes === undefined) return [];
  if (!Array.isArray(extraSchemes)) return ['redirectUris.extraSchemes: must be an array of URI schemes'];
  return extraSchemes.flatMap((scheme) => {
    const problem = typeof scheme === 'string' ? extraSchemeProblem(scheme) : 'must be a string';
    return problem ? [`redirectUris.extraSchemes: ${problem}`] : [];
  });
}

function clientProblems(clients: unknown): string[] {
  if (clients === undefined) return [];
  if (!Array.isArray(clients)) return ['clients: must be an array of client metadata'];
  const problems: string[] = [];
  clients.forEach((client: Partial<ClientMetadata> | undefined, i) => {
    if (!client || typeof client.client_id !== 'string' || !client.client_id) problems.push(`clients[${i}].client_id: required`);
    if (!client || typeof client !== 'object') return;
    // The same table the provider applies when it builds the client (lazily, at first use).
    const copy: Record<string, unknown> = structuredClone(client);
    copy.token_endpoint_auth_method ??= DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD;
    for (const refusal of applyMetadataPolicy('operator', copy)) problems.push(`clients[${i}]: ${refusal}`);
  });
  return problems;
}

/** Dev switches and production: where the server runs decides what it may do (ops/). */
function deploymentProblems(c: LooseOptions): string[] {
  const problems: string[] = [];
  // Production refuses dev switches itself (productionProblems); elsewhere the listen addresses
  // and the issuer decide (ops/dev-switches.ts).
  if (c.production) problems.push(...productionProblems(c));
  else {
    const exposure = { issuer: c.issuer, listenHosts: c.listenHosts, behindProxy: behindProxy(c.trustProxy) };
    problems.push(...devSwitchProblems(DEV_SWITCHES, c, exposure));
  }
  if (c.cimd?.extraCaCertificates && !c.cimd.allowPrivateNetwork) {
    problems.push('cimd.extraCaCertificates: only allowed together with cimd.allowPrivateNetwork (dev only)');
  }
  return problems;
}

/** Every problem of `config`, in the order of the options; empty when it is valid. */
export function configProblems(config: unknown): string[] {
  const c = (config && typeof config === 'object' ? config : {}) as LooseOptions;
  const issuerUrl = typeof c.issuer === 'string' ? parseUrl(c.issuer) : undefined;
  const loopback = !!issuerUrl && isLoopbackHost(issuerUrl.hostname);
  const clientIds = new Set(Array.isArray(c.clients) ? c.clients.map((client) => client?.client_id) : []);
  return [
    ...issuerProblems(c.issuer),
    ...resourceProblems(c),
    ...schemaProblems(c),
    ...refreshGraceConfigProblems(c.refreshTokens?.reuseGraceSeconds),
    // Who the client is behind proxies (client-address.ts): a hop count or the proxies' addresses.
    ...[trustProxyProblem(c.trustProxy)].filter((p): p is string => p !== undefined),
    ...deploymentProblems(c),
    ...redirectSchemeProblems(c.redirectUris),
    ...upstreamConfigProblems(c.upstream, loopback),
    ...clientProblems(c.clients),
    ...dpopConfigProblems(c.dpop),
    // What the consent page says about resources and scopes (interactions/scope-text.ts).
    ...scopeTextConfigProblems(c.resources, c.scopeDescriptions),
    ...idJagConfigProblems(c.idJag, loopback, clientIds as Set<string>),
    // The token vault's providers and keys; which configured clients are MCP servers (third-party/config.ts).
    ...thirdPartyConfigProblems(c.thirdParty, { asLoopback: loopback, production: c.production === true, resources: c.resources }),
    ...clientResourceProblems(c.clients, c.resources),
    ...storageProblems(c.storage),
  ];
}

function resolveIdJag(idJag: AuthorizationServerConfig['idJag']): ResolvedIdJagConfig | undefined {
  if (!idJag) return undefined;
  const d = DEFAULTS.idJag;
  return {
    ...idJag,
    trustedIdps: idJag.trustedIdps.map((idp) => ({ ...idp, algorithms: [...(idp.algorithms ?? d.trustedIdps.algorithms)] })),
    refreshTokens: idJag.refreshTokens ?? d.refreshTokens,
    allowClients: [...(idJag.allowClients ?? (d.allowClients as ResolvedIdJagConfig['allowClients']))],
    clockToleranceSeconds: idJag.clockToleranceSeconds ?? d.clockToleranceSeconds,
    maxAgeSeconds: idJag.maxAgeSeconds ?? d.maxAgeSeconds,
  };
}

function resolveThirdParty(thirdParty: AuthorizationServerConfig['thirdParty']): ResolvedThirdPartyConfig | undefined {
  if (!thirdParty) return undefined;
  const d = DEFAULTS.thirdParty;
  const providers: ResolvedThirdPartyConfig['providers'] = {};
  for (const [name, p] of Object.entries(thirdParty.providers)) {
    providers[name] = {
      ...p,
      scopes: [...p.scopes],
      resources: [...p.resources],
      displayName: p.displayName?.trim() || name,
      tokenEndpointAuthMethod: p.tokenEndpointAuthMethod ?? d.providers.tokenEndpointAuthMethod,
      allowPrivateNetwork: p.allowPrivateNetwork ?? d.providers.allowPrivateNetwork,
    };
  }
  return {
    providers,
    ...(thirdParty.encryptionKey !== undefined && { encryptionKey: thirdParty.encryptionKey }),
    previousEncryptionKeys: [...(thirdParty.previousEncryptionKeys ?? d.previousEncryptionKeys)],
    connectTicketTTL: thirdParty.connectTicketTTL ?? d.connectTicketTTL,
  };
}

/** The caller's options over the defaults tree; `config` must be valid (see {@link resolveConfig}). */
function applyDefaults(config: AuthorizationServerConfig): ResolvedConfig {
  const d = DEFAULTS;
  const registration = { ...d.registration, ...config.registration };
  return {
    ...config,
    clients: config.clients ?? [],
    registration: { ...registration, rateLimit: registration.rateLimit === false ? false : { ...registration.rateLimit } },
    cimd: { ...d.cimd, ...config.cimd },
    users: config.users ?? [],
    accessTokenTTL: config.accessTokenTTL ?? d.accessTokenTTL,
    refreshTokens: { ...d.refreshTokens, ...config.refreshTokens },
    sessionTTL: config.sessionTTL ?? d.sessionTTL,
    trustProxy: config.trustProxy ?? d.trustProxy,
    dpop: { ...d.dpop, ...config.dpop, algorithms: [...(config.dpop?.algorithms ?? d.dpop.algorithms)] },
    serviceName: config.serviceName ?? new URL(config.issuer).host,
    scopeDescriptions: { ...DEFAULT_SCOPE_DESCRIPTIONS, ...config.scopeDescriptions },
    upstream: (config.upstream ?? []).map((p) => ({ ...p, scopes: [...(p.scopes ?? d.upstream.scopes)] })),
    redirectUris: { extraSchemes: [...(config.redirectUris?.extraSchemes ?? [])] },
    loginThrottle: { ...d.loginThrottle, ...config.loginThrottle },
    production: config.production ?? d.production,
    metrics: { ...d.metrics, ...config.metrics },
    readinessTimeoutMs: config.readinessTimeoutMs ?? d.readinessTimeoutMs,
    idJag: resolveIdJag(config.idJag),
    thirdParty: resolveThirdParty(config.thirdParty),
    devAutoLogin: config.devAutoLogin?.trim() || undefined,
    audit: { ...d.audit, ...config.audit },
    console: config.console && { ...d.console, ...config.console },
  };
}

/**
 * Checks the whole configuration and returns it resolved over the defaults; throws one
 * ConfigError listing every problem (storage included) otherwise.
 */
export function resolveConfig(config: AuthorizationServerConfig): ResolvedConfig {
  const problems = configProblems(config);
  if (problems.length) throw new ConfigError(problems, CONFIG_SUBJECT);
  return applyDefaults(config);
}
