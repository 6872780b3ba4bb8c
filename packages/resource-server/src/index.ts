export { createResourceServer, type ResourceServer } from './resource-server.js';
export {
  createResourceServerCore,
  type ResourceServerCore,
  type AuthenticateRequest,
  type AuthenticatedRequest,
  type RequestBinding,
} from './resource-server-core.js';
export type { ResourceServerOptions, DpopOptions } from './options.js';
export {
  verifyDpopProof,
  normalizeHtu,
  accessTokenHash,
  confirmationJkt,
  DEFAULT_DPOP_PROOF_ALGORITHMS,
  MAX_DPOP_PROOF_LENGTH,
  type DpopProofRequest,
  type DpopProofOptions,
  type VerifiedDpopProof,
} from './dpop.js';
export { DpopNonces } from './dpop-nonce.js';
export { MemoryDpopReplayStore, replayKey, type DpopReplayStore } from './dpop-replay.js';
export { MemoryRevocationList, grantIdOf, GRANT_ID_CLAIM, type RevocationList } from './revocation.js';
export { extractCredentials, type Credentials, type TokenScheme } from './credentials.js';
export { createAccessTokenVerifier, type AccessTokenVerifier } from './access-token-verifier.js';
export {
  verifyJwtAccessToken,
  DEFAULT_ALGORITHMS,
  REQUIRED_CLAIMS,
  type JwtVerifyOptions,
} from './verify-jwt.js';
export { introspectAccessToken, type IntrospectionOptions } from './introspection.js';
export {
  buildChallenge,
  canonicalResource,
  protectedResourceMetadataUrl,
  quoteValue,
  isScopeToken,
  type ChallengeParams,
} from '@mcp-auth-kit/protocol';
// Thrown by createResourceServer for bad options; the one class every mcp-auth-kit package throws.
export { ConfigError, INVALID_CONFIG } from '@mcp-auth-kit/protocol';
export { extractBearerToken, MAX_TOKEN_LENGTH, type BearerSources } from './bearer.js';
export {
  protectedResourceMetadata,
  type ProtectedResourceMetadata,
  type ProtectedResourceMetadataOptions,
} from './metadata.js';
export {
  requiredScopes,
  missingScopes,
  expandScopes,
  checkScopes,
  type ScopePolicy,
  type ScopeHierarchy,
  type ChallengeScopeStrategy,
} from './scope-policy.js';
export { audienceIncludes } from './resource-uri.js';
export { checkOrigin, checkHost, normalizeOrigin } from './origin.js';
export { processMetadata, type AuthorizationServerMetadata } from './as-metadata.js';
export { renderError, type ErrorResponse } from './respond.js';
export { TokenCache, tokenHash } from './token-cache.js';
export {
  ResourceServerError,
  reasonToWire,
  type RejectionReason,
  type BearerErrorCode,
  type WireError,
} from './errors.js';
export type { VerifiedAccessToken, McpAuthInfo, ResourceServerLogger } from './types.js';
export type { ValidationOutcome } from './validation-hook.js';
