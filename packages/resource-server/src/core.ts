// @mcp-auth-kit/resource-server/core: the framework-neutral building blocks under `rs.protect`,
// for adapters to other frameworks (README "API"). Not needed with express.
export {
  createResourceServerCore,
  type ResourceServerCore,
  type AuthenticateRequest,
  type AuthenticatedRequest,
  type RequestBinding,
} from './resource-server-core.js';
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
export { MemoryDpopReplayStore, type DpopReplayStore } from './dpop-replay.js';
export type { RevocationList } from './revocation.js';
export { extractCredentials, type Credentials, type TokenScheme } from './credentials.js';
export { verifyJwtAccessToken, DEFAULT_ALGORITHMS, type JwtVerifyOptions } from './verify-jwt.js';
export { introspectAccessToken, type IntrospectionOptions, type IntrospectContext } from './introspection.js';
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
export type { ErrorResponse } from './respond.js';
export { ResourceServerError, type RejectionReason, type BearerErrorCode, type WireError } from './errors.js';
export type { VerifiedAccessToken, McpAuthInfo, ResourceServerLogger } from './types.js';
export type { ValidationOutcome } from './validation-hook.js';
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
