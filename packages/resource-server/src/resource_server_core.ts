import { createAccessTokenVerifier, type AccessTokenVerifier } from './access_token_verifier.js';
import { extractBearerToken, type BearerSources } from './bearer.js';
import type { ResourceServerError } from './errors.js';
import { protectedResourceMetadata, type ProtectedResourceMetadata } from './metadata.js';
import { checkHost, checkOrigin } from './origin.js';
import { logRejection, renderError, type ErrorResponse } from './respond.js';
import { protectedResourceMetadataUrl } from './resource_uri.js';
import { checkScopes, requiredScopes } from './scope_policy.js';
import { resolveOptions, type ResolvedOptions, type ResourceServerOptions } from './options.js';
import type { McpAuthInfo, VerifiedAccessToken } from './types.js';
import { notifyValidation } from './validation_hook.js';

/**
 * Framework-neutral resource server: every step of request authorization as a function of plain
 * values, so adapters (express here) only move data in and out.
 */
export interface ResourceServerCore {
  readonly options: ResolvedOptions;
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
  toAuthInfo(verified: VerifiedAccessToken): McpAuthInfo;
  /** Logs the refusal and renders it. */
  refuse(err: ResourceServerError, token?: string): ErrorResponse;
  readonly verifier: AccessTokenVerifier;
}

export function createResourceServerCore(input: ResourceServerOptions): ResourceServerCore {
  const options = resolveOptions(input);
  const metadataUrl = protectedResourceMetadataUrl(options.resource);
  const verifier = createAccessTokenVerifier(options);
  const metadata = protectedResourceMetadata({
    resource: options.resource,
    authorizationServers: options.authorizationServers,
    ...(options.scopesSupported !== undefined ? { scopesSupported: options.scopesSupported } : {}),
    ...(input.resourceName !== undefined ? { resourceName: input.resourceName } : {}),
    ...(input.resourceDocumentation !== undefined ? { resourceDocumentation: input.resourceDocumentation } : {}),
    ...(input.extraMetadata !== undefined ? { extraMetadata: input.extraMetadata } : {}),
  });
  const renderContext = {
    resourceMetadataUrl: metadataUrl,
    defaultScope: options.policy.default ?? [],
    ...(input.realm !== undefined ? { realm: input.realm } : {}),
  };
  const scheme = options.resourceUrl.protocol as 'http:' | 'https:';

  return {
    options,
    metadata,
    metadataUrl,
    verifier,
    checkTransport({ origin, host }) {
      checkOrigin(origin, options.allowedOrigins);
      checkHost(host, options.allowedHosts, scheme);
    },
    extractToken: extractBearerToken,
    verifyAccessToken: (token) => verifier.verify(token),
    requiredScopes: (body) => requiredScopes(body, options.policy),
    checkScopes(verified, body) {
      checkScopes(verified.scopes, requiredScopes(body, options.policy), {
        hierarchy: options.hierarchy,
        strategy: options.challengeScopes,
        knownScopes: options.knownScopes,
      });
    },
    toAuthInfo(verified) {
      return {
        token: verified.token,
        clientId: verified.clientId,
        scopes: [...verified.scopes],
        expiresAt: verified.expiresAt,
        resource: new URL(options.resource),
        resourceMetadataUrl: metadataUrl,
        extra: {
          sub: verified.subject,
          iss: verified.issuer,
          jti: verified.jti,
          claims: verified.claims,
          tokenType: verified.source,
        },
      };
    },
    refuse(err, token) {
      logRejection(options.logger, err, token);
      notifyValidation(options.logger, { ok: false, reason: err.reason, status: err.status });
      return renderError(err, renderContext);
    },
  };
}
