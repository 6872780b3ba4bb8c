import { createAccessTokenVerifier, createKeyStore, type AccessTokenVerifier } from './access-token-verifier.js';
import { bindThirdPartyTokens } from './third-party/lookup.js';
import { thirdPartyTokens, type ThirdPartyTokens } from './third-party/tokens.js';
import { extractBearerToken, type BearerSources } from './bearer.js';
import { ResourceServerError } from './errors.js';
import { protectedResourceMetadata, type ProtectedResourceMetadata } from './metadata.js';
import { checkHost, checkLoopbackHost, checkOrigin } from './origin.js';
import { logRejection, renderError, type ErrorResponse } from './respond.js';
import { protectedResourceMetadataUrl } from '@mcp-auth-kit/protocol';
import { checkScopes, requiredScopes } from './scope-policy.js';
import { resolveOptions } from './options.js';
import type { ResolvedOptions, ResourceServerOptions } from './config/types.js';
import type { McpAuthInfo, VerifiedAccessToken } from './types.js';
import { ConnectionCredentials, extractCredentials, type Credentials, type TokenScheme } from './credentials.js';
import { confirmationJkt, verifyDpopProof, type VerifiedDpopProof } from './dpop.js';
import { DpopNonces } from './dpop-nonce.js';
import { MemoryDpopReplayStore, replayKey, type DpopReplayStore } from './dpop-replay.js';
import { withRevocationCheck } from './revocation.js';
import { ReadonlyUrl } from './readonly-url.js';

/** One request, as {@link ResourceServerCore.authenticate} needs it (framework-neutral). */
export interface AuthenticateRequest {
  /** The raw `Authorization` header value. */
  authorization: string | undefined;
  /** Every `DPoP` header field value (an array when the header was repeated). */
  dpop?: string | readonly string[] | undefined;
  /** HTTP method as received. */
  method: string;
  /** Request target (path + query): an `access_token` query parameter is refused. */
  url?: string;
  /** `true` when a form body carried `access_token` (refused). */
  tokenInBody?: boolean;
}

/** A request whose credentials are valid (scope not yet checked). */
export interface AuthenticatedRequest {
  verified: VerifiedAccessToken;
  scheme: TokenScheme;
  /** Thumbprint of the key a DPoP-bound token is bound to. */
  jkt?: string;
  /** A fresh nonce to send as `DPoP-Nonce` on the response (RFC 9449 §8.2). */
  dpopNonce?: string;
}

/** Binding of a request to its token, for {@link ResourceServerCore.toAuthInfo}. */
export interface RequestBinding {
  scheme: TokenScheme;
  jkt?: string | undefined;
}
import { notifyValidation } from './validation-hook.js';

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

export function createInternalCore(input: ResourceServerOptions): InternalResourceServerCore {
  const options = resolveOptions(input);
  const metadataUrl = protectedResourceMetadataUrl(options.resource);
  const keys = createKeyStore(options);
  // opt-in revocation signal: checked after the cache too (revocation.ts)
  const verifier = withRevocationCheck(createAccessTokenVerifier(options, keys), options.revocation);
  const metadata = protectedResourceMetadata({
    resource: options.resource,
    authorizationServers: options.authorizationServers,
    ...(options.scopesSupported !== undefined ? { scopesSupported: options.scopesSupported } : {}),
    ...(input.resourceName !== undefined ? { resourceName: input.resourceName } : {}),
    ...(input.resourceDocumentation !== undefined ? { resourceDocumentation: input.resourceDocumentation } : {}),
    ...(input.extraMetadata !== undefined ? { extraMetadata: input.extraMetadata } : {}),
    ...(options.dpop !== undefined ? { dpop: { algorithms: options.dpop.algorithms, required: options.dpop.required } } : {}),
  });
  const dpop = options.dpop;
  const nonces = dpop?.nonce !== undefined ? new DpopNonces(dpop.nonce.secret, dpop.nonce.lifetimeSeconds, options.now) : undefined;
  const replay: DpopReplayStore | undefined =
    dpop === undefined ? undefined : 'add' in dpop.replay ? dpop.replay : new MemoryDpopReplayStore(dpop.replay.maxEntries, options.now);
  const renderContext = {
    resourceMetadataUrl: metadataUrl,
    defaultScope: options.policy.default ?? [],
    ...(input.realm !== undefined ? { realm: input.realm } : {}),
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

  /** A verified token presented with the Bearer scheme: the one rule both paths share. */
  function acceptBearer(verified: VerifiedAccessToken): AuthenticatedRequest {
    // RFC 9449 §7.2: a DPoP-bound token is never accepted as a bearer token (downgrade)
    if (confirmationJkt(verified.claims) !== undefined) throw new ResourceServerError('dpop_bound_token_as_bearer');
    return { verified, scheme: 'bearer' };
  }

  async function authenticate(request: AuthenticateRequest, credentials?: Credentials): Promise<AuthenticatedRequest> {
    const { scheme, token } =
      credentials ??
      extractCredentials(
        {
          authorization: request.authorization,
          ...(request.url !== undefined ? { url: request.url } : {}),
          ...(request.tokenInBody !== undefined ? { tokenInBody: request.tokenInBody } : {}),
        },
        dpop !== undefined,
      );
    // a DPoP-only server refuses Bearer before spending any work on the token
    if (scheme === 'bearer' && dpop?.required === true) throw new ResourceServerError('dpop_required');
    let proof: VerifiedDpopProof | undefined;
    if (scheme === 'dpop' && dpop !== undefined) {
      const proofs = request.dpop === undefined ? [] : typeof request.dpop === 'string' ? [request.dpop] : request.dpop;
      // before the token: local checks only, no network I/O for a bad proof
      proof = await verifyDpopProof(
        { proofs, method: request.method, accessToken: token },
        {
          algorithms: dpop.algorithms,
          htu: dpop.htu,
          maxAgeSeconds: dpop.maxAgeSeconds,
          clockToleranceSeconds: dpop.clockToleranceSeconds,
          nonces,
          now: options.now,
        },
      );
    }
    const verified = await verifier.verify(token);
    if (scheme === 'bearer') return acceptBearer(verified);
    const jkt = confirmationJkt(verified.claims);
    // RFC 9449 §4.3 check 13 / §7.1: the token must be bound to the proof's key
    if (jkt === undefined) throw new ResourceServerError('dpop_token_not_bound');
    if (jkt !== proof!.jkt) throw new ResourceServerError('dpop_key_mismatch', { detail: { expected: jkt, actual: proof!.jkt } });
    // RFC 9449 §11.1: recorded only now, so only holders of a valid bound token fill the store
    if (!(await replay!.add(replayKey(proof!.jkt, proof!.jti), proof!.replayUntil))) {
      throw new ResourceServerError('dpop_replayed');
    }
    return { verified, scheme, jkt, ...(proof!.nextNonce !== undefined ? { dpopNonce: proof!.nextNonce } : {}) };
  }

  // The same steps as `authenticate` for a Bearer token, when the verifier answers from its cache:
  // a warm request then costs no promise at all. (A verifier without `cached`, e.g. one wrapped
  // with extra checks, always takes the full path.)
  const cachedLookup = verifier.cached?.bind(verifier);
  function authenticateFromCache({ scheme, token }: Credentials, connection?: object): AuthenticatedRequest | undefined {
    if (scheme !== 'bearer' || cachedLookup === undefined) return undefined;
    if (dpop?.required === true) throw new ResourceServerError('dpop_required');
    const verified = cachedLookup(token, connection);
    return verified === undefined ? undefined : acceptBearer(verified);
  }

  const connectionCredentials = new ConnectionCredentials(dpop !== undefined);

  const scheme = options.resourceUrl.protocol as 'http:' | 'https:';
  // One-entry memos of the last Origin and Host values that passed: clients repeat the same
  // header on every request, and each check parses a URL. Only values that passed are kept, and
  // each check depends on the value and the configuration alone.
  let passedOrigin: string | undefined;
  let passedHost: string | undefined;
  // the scopes a request without a JSON-RPC body needs, computed once
  const defaultRequired: readonly string[] = Object.freeze(requiredScopes(undefined, options.policy));
  const scopeCheckOptions = {
    hierarchy: options.hierarchy,
    strategy: options.challengeScopes,
    knownScopes: options.knownScopes,
  };
  const resourceMetadataUrl = metadataUrl;
  // one URL for every request's `req.auth.resource`, read-only so no handler can change it for
  // the next (a new URL per request would add about a quarter to a cache hit's cost)
  const resourceUrl = new ReadonlyUrl(options.resource);
  const thirdParty =
    options.thirdParty === undefined
      ? undefined
      : thirdPartyTokens(options.thirdParty, {
          issuers: options.authorizationServers,
          metadata: (issuer) => keys.metadata(issuer),
          fetch: options.fetch,
          now: options.now,
          logger: options.logger,
        });
  if (thirdParty !== undefined) bindThirdPartyTokens(resourceUrl, thirdParty);

  return {
    options,
    metadata,
    metadataUrl,
    verifier,
    thirdParty,
    checkTransport({ origin, host }) {
      if (origin !== undefined && origin !== passedOrigin) {
        checkOrigin(origin, options.allowedOrigins);
        passedOrigin = origin;
      }
      if (host === undefined || host !== passedHost) {
        if (options.loopbackHostsOnly) checkLoopbackHost(host, scheme);
        else checkHost(host, options.allowedHosts, scheme);
        passedHost = host;
      }
    },
    extractToken: extractBearerToken,
    extractCredentials: (sources, connection) => connectionCredentials.extract(sources, connection),
    authenticate,
    authenticateFromCache,
    dpopNonce: () => nonces?.current(),
    verifyAccessToken: (token) => verifier.verify(token),
    requiredScopes: (body) => requiredScopes(body, options.policy),
    checkScopes(verified, body) {
      checkScopes(verified.scopes, body === undefined ? defaultRequired : requiredScopes(body, options.policy), scopeCheckOptions);
    },
    toAuthInfo(verified, binding) {
      const extra: Record<string, unknown> = {
        sub: verified.subject,
        iss: verified.issuer,
        jti: verified.jti,
        claims: verified.claims,
        tokenType: verified.source,
      };
      // RFC 9449: how the token was presented and, for DPoP, the key it is bound to
      // (only with DPoP on, so Bearer-only servers keep the exact shape they had)
      if (dpop !== undefined) extra.scheme = binding?.scheme === 'dpop' ? 'DPoP' : 'Bearer';
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
    },
    refuse(err, token, request) {
      logRejection(options.logger, err, token);
      notifyValidation(options.logger, { ok: false, reason: err.reason, status: err.status });
      return renderError(err, renderContext, request);
    },
  };
}
