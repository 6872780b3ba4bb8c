import { ConfigError, isAccessTokenSyntax, issuerProblem } from '@mcp-auth-kit/protocol';
import type { AuthorizationServerMetadata } from '../as-metadata.js';
import { KeyStore } from '../key-store.js';
import { resolveThirdParty } from '../config/resolve.js';
import { DEFAULTS } from '../config/defaults.js';
import type { ResolvedThirdPartyOptions, ThirdPartyOptions } from '../config/types.js';
import { tokenHash } from '../token-cache.js';
import type { McpAuthInfo, ResourceServerLogger } from '../types.js';
import { ThirdPartyAuthorizationRequiredError, ThirdPartyTokenError } from './errors.js';
import { exchangeToken, refusal, tokenEndpointProblem } from './exchange.js';

/** Per-call options of {@link ThirdPartyTokens.token}. */
export interface ThirdPartyTokenRequestOptions {
  /** Cancels the wait (pass the tool call's `signal`): the caller is answered at once with its reason. */
  signal?: AbortSignal;
  /** Ask the authorization server even when a token is cached (e.g. after the provider refused the cached one). */
  bypassCache?: boolean;
}

/** Provider tokens for the users of one MCP server: what `thirdPartyToken` calls. */
export interface ThirdPartyTokens {
  /**
   * The provider's access token for the user `authInfo` belongs to, by RFC 8693 token exchange of
   * `authInfo.token` (the MCP access token) at the token's own authorization server.
   * @throws {ThirdPartyAuthorizationRequiredError} the user has not connected the provider
   * @throws {ThirdPartyTokenError} any other refusal
   */
  token(authInfo: McpAuthInfo, provider: string, options?: ThirdPartyTokenRequestOptions): Promise<string>;
  /** Drops every cached provider token. */
  clear(): void;
}

/** Options of {@link createThirdPartyTokens}: the client settings plus the authorization server. */
export interface ThirdPartyTokensOptions extends ThirdPartyOptions {
  /** Issuer of the authorization server that issues the MCP access tokens (its token endpoint is discovered, RFC 8414). */
  issuer: string;
  /** fetch used for metadata and exchanges (default global `fetch`). */
  fetch?: typeof fetch;
  /** Clock in ms (default `Date.now`), for cache expiry. */
  now?: () => number;
  /** Receives refusals (code, provider, status), never a token. */
  logger?: ResourceServerLogger;
}

/** What the token cache and the exchanges need besides the client settings. */
export interface ThirdPartyContext {
  /** The issuers whose MCP tokens may be exchanged: a token goes only to its own issuer. */
  issuers: readonly string[];
  /** RFC 8414 metadata of an issuer (the resource server's own discovery, with its deadlines and failure cooldown). */
  metadata(issuer: string): Promise<AuthorizationServerMetadata>;
  fetch: typeof fetch;
  now: () => number;
  logger: ResourceServerLogger | undefined;
}

/** A provider's short name at the authorization server (`drive`): also the RFC 8693 `audience`. */
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Creates the exchanges of one MCP server outside the middleware (the middleware's `thirdParty`
 * option builds the same from its own settings): pass the result as `thirdPartyToken(authInfo,
 * provider, { tokens })`, or call `tokens.token(authInfo, provider)`.
 * @throws {ConfigError} listing every bad option
 */
export function createThirdPartyTokens(options: ThirdPartyTokensOptions): ThirdPartyTokens {
  const problems: string[] = [];
  const resolved = resolveThirdParty(problems, '', options);
  // the issuer is compared with the tokens' `iss` and is where their metadata is looked up
  const issuer = issuerProblem(options.issuer);
  if (issuer !== undefined) problems.push(`issuer ${issuer}`);
  if (problems.length > 0) throw new ConfigError(problems, 'third-party tokens');
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const now = options.now ?? Date.now;
  // the resource server's own metadata discovery (one fetch per issuer, failures remembered briefly)
  const discovery = new KeyStore({
    fetch: fetchImpl,
    timeoutMs: resolved.timeoutMs,
    cooldownMs: 0,
    cacheMaxAgeMs: 0,
    failureCooldownMs: DEFAULTS.jwks.failureCooldownMs,
    jwksUris: {},
    now,
  });
  return thirdPartyTokens(resolved, {
    issuers: [options.issuer],
    metadata: (issuer) => discovery.metadata(issuer),
    fetch: fetchImpl,
    now,
    logger: options.logger,
  });
}

interface CachedToken {
  token: string;
  /** ms since the epoch */
  until: number;
}

/** The issuer this MCP token may be sent to: its own (`iss`), one this server trusts. */
function issuerOf(authInfo: McpAuthInfo, provider: string, issuers: readonly string[]): string {
  const iss = authInfo.extra?.iss;
  if (typeof iss === 'string') {
    if (issuers.includes(iss)) return iss;
  } else if (iss === undefined && issuers.length === 1) {
    // a token whose issuer the verification did not name (introspection without `iss`): the one AS
    return issuers[0]!;
  }
  throw new ThirdPartyTokenError(
    'not_configured',
    provider,
    `No authorization server to exchange this MCP access token at for a ${JSON.stringify(provider)} token (its issuer is not the configured one)`,
  );
}

/**
 * Provider tokens keyed by (SHA-256 of the MCP token, provider): another user's token has another
 * key, so no user is ever answered with another's provider token, and the cache holds no usable
 * MCP token. Least recently stored dropped first.
 */
class ProviderTokenCache {
  private readonly entries = new Map<string, CachedToken>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  remember(key: string, entry: CachedToken): void {
    if (this.maxEntries <= 0 || !(entry.until > this.now())) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  get(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() >= entry.until) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.token;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** A refusal, logged without the token (its hash prefix only); not connected yet is the normal first step. */
function logRefusal(logger: ResourceServerLogger | undefined, authInfo: McpAuthInfo, provider: string, err: unknown): void {
  if (logger === undefined || !(err instanceof ThirdPartyTokenError)) return;
  const details = {
    provider,
    code: err.code,
    ...(err.status !== undefined ? { status: err.status } : {}),
    token_sha256_prefix: tokenHash(authInfo.token).slice(0, 12),
  };
  const line = err instanceof ThirdPartyAuthorizationRequiredError ? (logger.debug ?? logger.info) : (logger.warn ?? logger.info);
  line?.call(logger, 'mcp-auth-kit resource-server: third-party token not issued', details);
}

/** @throws {TypeError} for a provider name or an `authInfo` that a tool handler cannot have meant. */
function checkTokenRequest(authInfo: McpAuthInfo, provider: string): void {
  if (typeof provider !== 'string' || !PROVIDER_NAME.test(provider)) {
    throw new TypeError('provider must be the provider\'s short name at the authorization server (letters, digits, ".", "_", "-")');
  }
  if (typeof authInfo !== 'object' || authInfo === null || !isAccessTokenSyntax(authInfo.token)) {
    throw new TypeError("authInfo must be the request's auth info (req.auth, extra.authInfo or ctx.http.authInfo)");
  }
}

/** One RFC 8693 exchange of an MCP token for a provider's token, with how long it may be cached. */
function exchanger(options: ResolvedThirdPartyOptions, context: ThirdPartyContext) {
  const credentials = { clientId: options.clientId, clientSecret: options.clientSecret, authMethod: options.authMethod };

  async function tokenEndpointOf(issuer: string, provider: string): Promise<string> {
    if (options.tokenEndpoint !== undefined) return options.tokenEndpoint;
    let metadata: AuthorizationServerMetadata;
    try {
      metadata = await context.metadata(issuer);
    } catch (cause) {
      throw refusal('temporarily_unavailable', provider, { cause: cause instanceof Error ? new Error(cause.message) : undefined });
    }
    const endpoint = metadata.token_endpoint;
    if (endpoint === undefined || tokenEndpointProblem(endpoint) !== undefined) throw refusal('invalid_response', provider);
    return endpoint;
  }

  return async function exchange(authInfo: McpAuthInfo, provider: string): Promise<CachedToken> {
    const issuer = issuerOf(authInfo, provider, context.issuers);
    const tokenEndpoint = await tokenEndpointOf(issuer, provider);
    const exchanged = await exchangeToken({
      tokenEndpoint,
      issuer,
      credentials,
      subjectToken: authInfo.token,
      provider,
      fetch: context.fetch,
      timeoutMs: options.timeoutMs,
    });
    const at = context.now();
    let until = at;
    if (exchanged.expiresIn !== undefined) {
      // dropped shortly before the provider's own expiry (at most half its lifetime early), and
      // never kept past the MCP token's: nobody can present that key any more
      const skew = Math.min(options.expirySkewSeconds, exchanged.expiresIn / 2);
      until = at + (exchanged.expiresIn - skew) * 1000;
      if (typeof authInfo.expiresAt === 'number') until = Math.min(until, authInfo.expiresAt * 1000);
    }
    return { token: exchanged.accessToken, until };
  };
}

/** {@link ThirdPartyTokens} from checked options (the middleware's path and {@link createThirdPartyTokens}). */
export function thirdPartyTokens(options: ResolvedThirdPartyOptions, context: ThirdPartyContext): ThirdPartyTokens {
  const { now, logger } = context;
  const cache = new ProviderTokenCache(options.cacheMaxEntries, now);
  const inFlight = new Map<string, Promise<CachedToken>>();
  const exchange = exchanger(options, context);

  return {
    async token(authInfo, provider, request = {}) {
      checkTokenRequest(authInfo, provider);
      request.signal?.throwIfAborted();
      const key = `${tokenHash(authInfo.token)} ${provider}`;
      if (request.bypassCache !== true) {
        const hit = cache.get(key);
        if (hit !== undefined) return hit;
      }
      let pending = inFlight.get(key);
      if (pending === undefined) {
        // concurrent calls for one (token, provider) share one exchange (and one connect URL)
        pending = exchange(authInfo, provider).then(
          (entry) => {
            inFlight.delete(key);
            cache.remember(key, entry);
            return entry;
          },
          (err: unknown) => {
            inFlight.delete(key);
            logRefusal(logger, authInfo, provider, err);
            throw err;
          },
        );
        inFlight.set(key, pending);
      }
      const entry = await abortable(pending, request.signal);
      return entry.token;
    },
    clear() {
      cache.clear();
    },
  };
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts (the work goes on for other callers). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
