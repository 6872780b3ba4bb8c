import { createAccessTokenVerifier, createKeyStore } from './access-token-verifier.js';
import { bindThirdPartyTokens } from './third-party/lookup.js';
import { thirdPartyTokens, type ThirdPartyTokens } from './third-party/tokens.js';
import { extractBearerToken, type BearerSources } from './bearer.js';
import type { ResourceServerError } from './errors.js';
import { protectedResourceMetadata, type ProtectedResourceMetadata } from './metadata.js';
import { checkHost, checkLoopbackHost, checkOrigin } from './origin.js';
import { logRejection, renderError, type ErrorResponse } from './respond.js';
import { protectedResourceMetadataUrl } from '@mcp-auth-kit/protocol';
import { checkScopes, requiredScopes } from './scope-policy.js';
import { resolveOptions } from './config/resolve.js';
import type { ResolvedOptions, ResourceServerOptions } from './config/types.js';
import type {
  AccessTokenVerifier,
  AuthenticatedRequest,
  AuthenticateRequest,
  DpopReplayStore,
  McpAuthInfo,
  RequestBinding,
  TokenScheme,
  VerifiedAccessToken,
} from './types.js';
import { ConnectionCredentials, type Credentials } from './credentials.js';
import { notifyValidation } from './validation-hook.js';
import { createRequestAuth } from './request-auth.js';
import type { KeyStore } from './key-store.js';
import { DpopNonces } from './dpop-nonce.js';
import { MemoryDpopReplayStore } from './dpop-replay.js';
import { withRevocationCheck } from './revocation.js';
import { ReadonlyUrl } from './readonly-url.js';

export type { AuthenticatedRequest, AuthenticateRequest, RequestBinding };

/**
 * Framework-neutral resource server: every step of request authorization as a function of plain
 * values, so adapters (express here) only move data in and out.
 */
export interface ResourceServerCore {
  /** The RFC 9728 document. */
  readonly metadata: ProtectedResourceMetadata;
  /** Path-based well-known URL of the document (the challenge `resource_metadata`). */
  readonly metadataUrl: string;
  /** Origin/Host guard (Streamable HTTP §Security). @throws {ResourceServerError} 403 */
  checkTransport(request: { origin: string | undefined; host: string | undefined }): void;
  /** @throws {ResourceServerError} 400/401 */
  extractToken(sources: BearerSources): string;
  /** @throws {ResourceServerError} 401 `invalid_token` */
  verifyAccessToken(token: string): Promise<VerifiedAccessToken>;
  /** Applies the scope policy to a (parsed) JSON-RPC body. @throws {ResourceServerError} 403 */
  checkScopes(verified: VerifiedAccessToken, body: unknown): void;
  /** Scopes a JSON-RPC body needs under the policy. */
  requiredScopes(body: unknown): string[];
  toAuthInfo(verified: VerifiedAccessToken, binding?: RequestBinding): McpAuthInfo;
  /** Logs the refusal and renders it (`request.scheme`: the scheme the request used, for DPoP challenges). */
  refuse(err: ResourceServerError, token?: string, request?: { scheme?: TokenScheme }): ErrorResponse;
  /**
   * The token and its scheme from the `Authorization` header (`DPoP` only when DPoP is on).
   * `connection`: the request's socket, when there is one (a keep-alive connection's header is
   * parsed once, see `ConnectionCredentials`).
   * @throws {ResourceServerError} 400/401
   */
  extractCredentials(sources: BearerSources, connection?: object): Credentials;
  /**
   * Everything but the scope policy: credentials, DPoP proof (RFC 9449 §4.3), token, sender
   * constraint (`cnf.jkt`, §7.1/§7.2) and proof replay (§11.1). `credentials`: what
   * {@link extractCredentials} already returned for this request (not extracted again).
   * @throws {ResourceServerError} 400/401
   */
  authenticate(request: AuthenticateRequest, credentials?: Credentials): Promise<AuthenticatedRequest>;
  /**
   * {@link authenticate}'s answer when it needs no I/O and no promise: a cached `Bearer` token.
   * `undefined`: call `authenticate` (DPoP, a token not in the cache, the cache off).
   * `credentials`: what {@link extractCredentials} returned for this request; `connection`: the
   * request's socket, when there is one (a keep-alive connection's token is hashed once).
   * @throws {ResourceServerError} what `authenticate` would reject with for these credentials
   */
  authenticateFromCache(credentials: Credentials, connection?: object): AuthenticatedRequest | undefined;
  /** The current DPoP nonce (when nonces are on). */
  dpopNonce(): string | undefined;
}

/**
 * The core with what only this package's own adapter uses (resolved options, the verifier's
 * cache): kept off {@link ResourceServerCore} so they are not public API.
 */
export interface InternalResourceServerCore extends ResourceServerCore {
  readonly options: ResolvedOptions;
  readonly verifier: AccessTokenVerifier;
  /** The `thirdParty` option's exchanges (`thirdPartyToken` finds them through `req.auth.resource`). */
  readonly thirdParty: ThirdPartyTokens | undefined;
}

export function createResourceServerCore(input: ResourceServerOptions): ResourceServerCore {
  return createInternalCore(input);
}

/** The RFC 9728 document of these options. */
function metadataOf(options: ResolvedOptions, input: ResourceServerOptions): ProtectedResourceMetadata {
  return protectedResourceMetadata({
    resource: options.resource,
    authorizationServers: options.authorizationServers,
    ...(options.scopesSupported !== undefined ? { scopesSupported: options.scopesSupported } : {}),
    ...(input.resourceName !== undefined ? { resourceName: input.resourceName } : {}),
    ...(input.resourceDocumentation !== undefined ? { resourceDocumentation: input.resourceDocumentation } : {}),
    ...(input.extraMetadata !== undefined ? { extraMetadata: input.extraMetadata } : {}),
    ...(options.dpop !== undefined ? { dpop: { algorithms: options.dpop.algorithms, required: options.dpop.required } } : {}),
  });
}

/** What every refusal's challenge carries (respond.ts). */
function renderContextOf(options: ResolvedOptions, metadataUrl: string, realm: string | undefined, nonces: DpopNonces | undefined) {
  const { dpop } = options;
  return {
    resourceMetadataUrl: metadataUrl,
    defaultScope: options.defaultScopes,
    ...(realm !== undefined ? { realm } : {}),
    ...(dpop !== undefined
      ? {
          dpop: {
            algorithms: dpop.algorithms,
            bearerAccepted: !dpop.required,
            ...(nonces !== undefined ? { nonce: () => nonces.current() } : {}),
          },
        }
      : {}),
  };
}

/**
 * The Origin / Host guard (Streamable HTTP §Security), with one-entry memos of the last values
 * that passed: clients repeat the same header on every request, and each check parses a URL.
 * Only values that passed are kept, and each check depends on the value and the options alone.
 */
function transportCheck(options: ResolvedOptions): ResourceServerCore['checkTransport'] {
  const scheme = options.resourceUrl.protocol as 'http:' | 'https:';
  let passedOrigin: string | undefined;
  let passedHost: string | undefined;
  return ({ origin, host }) => {
    if (origin !== undefined && origin !== passedOrigin) {
      checkOrigin(origin, options.allowedOrigins);
      passedOrigin = origin;
    }
    if (host === undefined || host !== passedHost) {
      if (options.loopbackHostsOnly) checkLoopbackHost(host, scheme);
      else checkHost(host, options.allowedHosts, scheme);
      passedHost = host;
    }
  };
}

/**
 * `req.auth` of a verified token. One URL for every request's `resource`, read-only so no
 * handler can change it for the next (a new URL per request would add about a quarter to a
 * cache hit's cost).
 */
function authInfoBuilder(
  options: ResolvedOptions,
  resourceUrl: ReadonlyUrl,
  resourceMetadataUrl: string,
): ResourceServerCore['toAuthInfo'] {
  const dpopOn = options.dpop !== undefined;
  return (verified, binding) => {
    const extra: Record<string, unknown> = {
      sub: verified.subject,
      iss: verified.issuer,
      jti: verified.jti,
      claims: verified.claims,
      tokenType: verified.source,
    };
    // RFC 9449: how the token was presented and, for DPoP, the key it is bound to
    // (only with DPoP on, so Bearer-only servers keep the exact shape they had)
    if (dpopOn) extra.scheme = binding?.scheme === 'dpop' ? 'DPoP' : 'Bearer';
    if (binding?.jkt !== undefined) extra.jkt = binding.jkt;
    return {
      token: verified.token,
      clientId: verified.clientId,
      scopes: [...verified.scopes],
      expiresAt: verified.expiresAt,
      resource: resourceUrl,
      resourceMetadataUrl,
      extra,
    };
  };
}

/** The `thirdParty` option's exchanges, found by `thirdPartyToken` through `req.auth.resource`. */
function thirdPartyOf(options: ResolvedOptions, keys: KeyStore, resourceUrl: ReadonlyUrl): ThirdPartyTokens | undefined {
  if (options.thirdParty === undefined) return undefined;
  const tokens = thirdPartyTokens(options.thirdParty, {
    issuers: options.authorizationServers,
    metadata: (issuer) => keys.metadata(issuer),
    fetch: options.fetch,
    now: options.now,
    logger: options.logger,
  });
  bindThirdPartyTokens(resourceUrl, tokens);
  return tokens;
}

export function createInternalCore(input: ResourceServerOptions): InternalResourceServerCore {
  const options = resolveOptions(input);
  const metadataUrl = protectedResourceMetadataUrl(options.resource);
  const keys = createKeyStore(options);
  // opt-in revocation signal: checked after the cache too (revocation.ts)
  const verifier = withRevocationCheck(createAccessTokenVerifier(options, keys), options.revocation);
  const { dpop } = options;
  const nonces = dpop?.nonce !== undefined ? new DpopNonces(dpop.nonce.secret, dpop.nonce.lifetimeSeconds, options.now) : undefined;
  const replay: DpopReplayStore | undefined =
    dpop === undefined ? undefined : 'add' in dpop.replay ? dpop.replay : new MemoryDpopReplayStore(dpop.replay.maxEntries, options.now);
  const renderContext = renderContextOf(options, metadataUrl, input.realm, nonces);
  const connectionCredentials = new ConnectionCredentials(dpop !== undefined);
  // the scopes a request without a JSON-RPC body needs, computed once
  const defaultRequired: readonly string[] = Object.freeze(requiredScopes(undefined, options.policy));
  const scopeCheckOptions = { hierarchy: options.hierarchy, strategy: options.challengeScopes, knownScopes: options.knownScopes };
  const resourceUrl = new ReadonlyUrl(options.resource);
  return {
    options,
    metadata: metadataOf(options, input),
    metadataUrl,
    verifier,
    thirdParty: thirdPartyOf(options, keys, resourceUrl),
    checkTransport: transportCheck(options),
    extractToken: extractBearerToken,
    extractCredentials: (sources, connection) => connectionCredentials.extract(sources, connection),
    ...createRequestAuth(options, { verifier, nonces, replay }),
    dpopNonce: () => nonces?.current(),
    verifyAccessToken: (token) => verifier.verify(token),
    requiredScopes: (body) => requiredScopes(body, options.policy),
    checkScopes(verified, body) {
      checkScopes(verified.scopes, body === undefined ? defaultRequired : requiredScopes(body, options.policy), scopeCheckOptions);
    },
    toAuthInfo: authInfoBuilder(options, resourceUrl, metadataUrl),
    refuse(err, token, request) {
      logRejection(options.logger, err, token);
      notifyValidation(options.logger, { ok: false, reason: err.reason, status: err.status });
      return renderError(err, renderContext, request);
    },
  };
}
