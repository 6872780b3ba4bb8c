import type { ClientMetadata } from './oidc-shapes.js';
import type { StorageConfig, Store } from './storage/types.js';
import { ConfigError, extraSchemeProblem, isLoopbackHost, isScopeToken } from '@mcp-auth-kit/protocol';
import { isValidResourceIndicator, parseUrl } from './urls.js';
import type { Logger } from './logger.js';
import { dpopConfigProblems, type DpopConfig } from './dpop.js';
import { upstreamConfigProblems, type UpstreamProviderConfig } from './upstream/config.js';
import type { LoginThrottleLimits } from './interactions/throttle.js';
import type { MetricsConfig } from './ops/metrics.js';
import { productionProblems } from './ops/production.js';
import { DEV_SWITCHES, devSwitchProblems } from './ops/dev-switches.js';
import { refreshGraceConfigProblems } from './refresh-grace.js';
import { trustProxyProblem } from './client-address.js';
import { applyMetadataPolicy, DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD } from './client-metadata-policy.js';
import { scopeTextConfigProblems } from './interactions/scope-text.js';
import { idJagConfigProblems, type IdJagConfig } from './grants/jwt-bearer/config.js';

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
  storage: StorageConfig | Store;
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
}

// One class for every package's configuration errors (re-exported, so `instanceof` holds across packages).
export { ConfigError };

/** What {@link ConfigError}'s message names: "Invalid authorization server configuration:". */
export const CONFIG_SUBJECT = 'authorization server';

const RESERVED_SCOPES = new Set(['openid', 'offline_access', 'profile', 'email', 'address', 'phone']);

function positiveInt(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

export function issuerIsLoopback(issuer: string): boolean {
  const url = parseUrl(issuer);
  return !!url && isLoopbackHost(url.hostname);
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

/** Checks the whole configuration and throws one ConfigError listing every problem. */
export function validateConfig(config: AuthorizationServerConfig): void {
  const problems: string[] = [];
  const c = (config ?? {}) as Partial<AuthorizationServerConfig>;

  const issuerUrl = typeof c.issuer === 'string' ? parseUrl(c.issuer) : undefined;
  if (!issuerUrl) {
    problems.push('issuer: must be an absolute URL, e.g. "https://auth.example.com"');
  } else {
    if (issuerUrl.protocol !== 'https:' && !(issuerUrl.protocol === 'http:' && isLoopbackHost(issuerUrl.hostname))) {
      problems.push(
        `issuer: must use https (http is only allowed for loopback hosts), got "${c.issuer}"; use the public https URL (terminate TLS at a proxy and set trustProxy / TRUST_PROXY=1)`,
      );
    }
    if (issuerUrl.search || issuerUrl.hash || c.issuer!.includes('?') || c.issuer!.includes('#')) {
      problems.push('issuer: must not contain a query or fragment (RFC 8414 §2)');
    }
    // `https://user:pass@host` (or a bare `@`): credentials in the issuer would be published in
    // the metadata and compared by every client; RFC 8414 §2 names scheme, host, port and path only.
    if (issuerUrl.username || issuerUrl.password || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(c.issuer!)) {
      problems.push('issuer: must not contain user information (credentials) before the host (RFC 8414 §2); remove "user:password@"');
    }
    if (c.issuer!.endsWith('/')) problems.push('issuer: must not end with "/"');
  }
  const loopback = !!issuerUrl && isLoopbackHost(issuerUrl.hostname);

  if (!Array.isArray(c.resources) || c.resources.length === 0) {
    problems.push('resources: at least one protected resource is required');
  } else {
    const seen = new Set<string>();
    c.resources.forEach((r, i) => {
      const where = `resources[${i}]`;
      if (!r || typeof r.resource !== 'string' || !isValidResourceIndicator(r.resource)) {
        problems.push(`${where}.resource: must be an absolute http(s) URI without a fragment (RFC 8707 §2)`);
        return;
      }
      if (seen.has(r.resource)) problems.push(`${where}.resource: duplicate "${r.resource}"`);
      seen.add(r.resource);
      if (!r.scopes || typeof r.scopes !== 'object' || Object.keys(r.scopes).length === 0) {
        problems.push(`${where}.scopes: must map at least one scope to its description`);
      } else {
        for (const [scope, description] of Object.entries(r.scopes)) {
          if (!isScopeToken(scope)) problems.push(`${where}.scopes: "${scope}" is not a valid scope token (RFC 6749 §3.3)`);
          if (RESERVED_SCOPES.has(scope)) problems.push(`${where}.scopes: "${scope}" is reserved for OpenID Connect`);
          if (typeof description !== 'string') problems.push(`${where}.scopes.${scope}: description must be a string`);
        }
      }
      if (
        r.defaultScopes !== undefined &&
        (!Array.isArray(r.defaultScopes) || r.defaultScopes.some((d) => !r.scopes || !(d in r.scopes)))
      ) {
        problems.push(`${where}.defaultScopes: must list scopes of this resource`);
      }
      if (r.accessTokenTTL !== undefined && !positiveInt(r.accessTokenTTL)) {
        problems.push(`${where}.accessTokenTTL: must be a positive integer (seconds)`);
      }
      problems.push(...introspectionClientProblems(where, r.introspectionClients, c.clients));
    });
  }

  if (c.accessTokenTTL !== undefined && !positiveInt(c.accessTokenTTL))
    problems.push('accessTokenTTL: must be a positive integer (seconds)');
  if (c.sessionTTL !== undefined && !positiveInt(c.sessionTTL)) problems.push('sessionTTL: must be a positive integer (seconds)');
  if (c.refreshTokens?.ttl !== undefined && !positiveInt(c.refreshTokens.ttl))
    problems.push('refreshTokens.ttl: must be a positive integer (seconds)');
  problems.push(...refreshGraceConfigProblems(c.refreshTokens?.reuseGraceSeconds));

  const trustProxy = trustProxyProblem(c.trustProxy);
  if (trustProxy) problems.push(trustProxy);
  if (c.devAutoLogin !== undefined && (typeof c.devAutoLogin !== 'string' || !c.devAutoLogin.trim())) {
    problems.push('devAutoLogin: must be a username');
  }
  if (c.listenHosts !== undefined && (!Array.isArray(c.listenHosts) || c.listenHosts.some((h) => typeof h !== 'string'))) {
    problems.push('listenHosts: must be an array of the addresses the server listens on');
  }
  // Dev switches: production refuses them (productionProblems); elsewhere the listen addresses
  // and the issuer decide (ops/dev-switches.ts).
  if (!c.production) problems.push(...devSwitchProblems(DEV_SWITCHES, c, { issuer: c.issuer, listenHosts: c.listenHosts }));
  if (c.cimd?.extraCaCertificates && !c.cimd.allowPrivateNetwork) {
    problems.push('cimd.extraCaCertificates: only allowed together with cimd.allowPrivateNetwork (dev only)');
  }
  for (const key of ['allowedHosts', 'deniedHosts'] as const) {
    const list = c.cimd?.[key];
    if (list !== undefined && (!Array.isArray(list) || list.some((h) => typeof h !== 'string' || !h.trim()))) {
      problems.push(`cimd.${key}: must be an array of host patterns`);
    }
  }

  const extraSchemes = c.redirectUris?.extraSchemes;
  if (extraSchemes !== undefined) {
    if (!Array.isArray(extraSchemes)) {
      problems.push('redirectUris.extraSchemes: must be an array of URI schemes');
    } else {
      for (const scheme of extraSchemes) {
        const problem = typeof scheme === 'string' ? extraSchemeProblem(scheme) : 'must be a string';
        if (problem) problems.push(`redirectUris.extraSchemes: ${problem}`);
      }
    }
  }

  const reg = c.registration;
  if (reg?.rateLimit && (!positiveInt(reg.rateLimit.max) || !positiveInt(reg.rateLimit.windowSeconds))) {
    problems.push('registration.rateLimit: max and windowSeconds must be positive integers');
  }
  if (reg?.clientSecretTTL !== undefined && !(Number.isSafeInteger(reg.clientSecretTTL) && reg.clientSecretTTL >= 0)) {
    problems.push('registration.clientSecretTTL: must be a non-negative integer (seconds; 0 = never)');
  }
  if (reg?.initialAccessToken !== undefined && (typeof reg.initialAccessToken !== 'string' || reg.initialAccessToken.length < 16)) {
    problems.push('registration.initialAccessToken: must be a string of at least 16 characters');
  }

  if (c.users !== undefined) {
    if (!Array.isArray(c.users)) problems.push('users: must be an array');
    else
      c.users.forEach((u, i) => {
        if (!u || typeof u.username !== 'string' || !u.username.trim()) problems.push(`users[${i}].username: required`);
        if (!u || typeof u.password !== 'string' || u.password.length < 8) problems.push(`users[${i}].password: at least 8 characters`);
      });
  }

  problems.push(...upstreamConfigProblems(c.upstream, loopback));
  for (const [k, v] of Object.entries(c.loginThrottle ?? {})) {
    if (!['perAddressAndUser', 'perUser', 'perAddress', 'windowSeconds'].includes(k)) problems.push(`loginThrottle.${k}: unknown field`);
    else if (!positiveInt(v)) problems.push(`loginThrottle.${k}: must be a positive integer`);
  }

  if (c.clients !== undefined && !Array.isArray(c.clients)) problems.push('clients: must be an array of client metadata');
  else
    c.clients?.forEach((client, i) => {
      if (!client || typeof client.client_id !== 'string' || !client.client_id) problems.push(`clients[${i}].client_id: required`);
      if (!client || typeof client !== 'object') return;
      // The same table the provider applies when it builds the client (lazily, at first use).
      const copy: Record<string, unknown> = structuredClone(client);
      copy.token_endpoint_auth_method ??= DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD;
      for (const refusal of applyMetadataPolicy('operator', copy)) problems.push(`clients[${i}]: ${refusal}`);
    });

  if (c.metrics?.token !== undefined && (typeof c.metrics.token !== 'string' || c.metrics.token.length < 16)) {
    problems.push('metrics.token: must be a string of at least 16 characters');
  }
  if (c.readinessTimeoutMs !== undefined && !positiveInt(c.readinessTimeoutMs))
    problems.push('readinessTimeoutMs: must be a positive integer (milliseconds)');
  if (c.production) problems.push(...productionProblems(c));

  problems.push(...dpopConfigProblems(c.dpop));
  // What the consent page says about resources and scopes (interactions/scope-text.ts).
  problems.push(...scopeTextConfigProblems(c.resources, c.scopeDescriptions));
  const clientIds = new Set(Array.isArray(c.clients) ? c.clients.map((client) => client?.client_id) : []);
  problems.push(...idJagConfigProblems(c.idJag, loopback, clientIds as Set<string>));

  if (!c.storage || typeof c.storage !== 'object')
    problems.push('storage: required ({ kind: "memory" | "sqlite" | "postgres", … } or a Store)');

  if (problems.length) throw new ConfigError(problems, CONFIG_SUBJECT);
}
