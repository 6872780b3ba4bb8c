// @mcp-auth-kit/resource-server/core: the framework-neutral building blocks under `rs.protect`,
// for adapters to other frameworks (README "API"). Not needed with express.
export { createResourceServerCore, type ResourceServerCore } from './resource-server-core.js';
export type { AuthenticateRequest, AuthenticatedRequest, RequestBinding } from './types.js';
export {
  verifyDpopProof,
  accessTokenHash,
  confirmationJkt,
  DEFAULT_DPOP_PROOF_ALGORITHMS,
  MAX_DPOP_PROOF_LENGTH,
  type DpopProofRequest,
  type DpopProofOptions,
  type VerifiedDpopProof,
} from './dpop.js';
export { DpopNonces } from './dpop-nonce.js';
export { MemoryDpopReplayStore } from './dpop-replay.js';
export type { DpopReplayStore, RevocationList } from './types.js';
export { extractCredentials, type Credentials } from './credentials.js';
export type { TokenScheme } from './types.js';
export { verifyJwtAccessToken, DEFAULT_ALGORITHMS, type JwtVerifyOptions } from './verify-jwt.js';
export { introspectAccessToken, type IntrospectContext } from './introspection.js';
export type { IntrospectionOptions } from './config/types.js';
export { extractBearerToken, MAX_TOKEN_LENGTH, type BearerSources } from './bearer.js';
export {
  protectedResourceMetadata,
  type ProtectedResourceMetadata,
  type ProtectedResourceMetadataOptions,
} from './metadata.js';
export { requiredScopes, missingScopes, expandScopes, checkScopes } from './scope-policy.js';
export type { ScopePolicy, ScopeHierarchy, ChallengeScopeStrategy } from './config/types.js';
export { audienceIncludes } from './resource-uri.js';
export { checkOrigin, checkHost, normalizeOrigin } from './origin.js';
export { processMetadata, type AuthorizationServerMetadata } from './as-metadata.js';
export type { ErrorResponse } from './respond.js';
export { ResourceServerError, type RejectionReason, type BearerErrorCode, type WireError } from './errors.js';
export type { VerifiedAccessToken, McpAuthInfo, ResourceServerLogger, ValidationOutcome } from './types.js';
export type { ResourceServerOptions, DpopOptions, ThirdPartyOptions } from './config/types.js';
export {
  createThirdPartyTokens,
  type ThirdPartyTokens,
  type ThirdPartyTokensOptions,
  type ThirdPartyTokenRequestOptions,
} from './third-party/tokens.js';
export {
  advertiseAuthExtensions,
  authExtensionCapabilities,
  type AuthExtensionsOptions,
  type CapabilityRegistrar,
} from './auth-extensions.js';
export { createStateBinding, type StateBinding, type StateBindingOptions } from './state-binding.js';
