// @mcp-auth-kit/resource-server: what an express MCP server needs (README "API"). Building blocks
// for other frameworks are in ./core.ts (@mcp-auth-kit/resource-server/core); the rest is internal.
export { createResourceServer, type ResourceServer } from './resource-server.js';
export type { ResourceServerCore, AuthenticateRequest, AuthenticatedRequest, RequestBinding } from './resource-server-core.js';
export type { ResourceServerOptions, DpopOptions, ThirdPartyOptions } from './config/types.js';
// The one class every mcp-auth-kit package throws for bad options (defined in @mcp-auth-kit/protocol).
export { ConfigError } from '@mcp-auth-kit/protocol';
export { ResourceServerError, type RejectionReason, type BearerErrorCode } from './errors.js';
export { MemoryDpopReplayStore, type DpopReplayStore } from './dpop-replay.js';
export { MemoryRevocationList, grantIdOf, GRANT_ID_CLAIM, type RevocationList } from './revocation.js';
export type { ScopePolicy, ScopeHierarchy, ChallengeScopeStrategy } from './scope-policy.js';
export type { ProtectedResourceMetadata } from './metadata.js';
export type { TokenScheme, Credentials } from './credentials.js';
export type { BearerSources } from './bearer.js';
export type { ErrorResponse } from './respond.js';
export type { IntrospectionOptions } from './introspection.js';
export type { VerifiedAccessToken, McpAuthInfo, ResourceServerLogger } from './types.js';
export type { ValidationOutcome } from './validation-hook.js';
// Third-party APIs from tool handlers (issue 41): RFC 8693 exchange at the AS, URL elicitation when not connected.
export { thirdPartyToken, type ThirdPartyTokenOptions } from './third-party/lookup.js';
export {
  withThirdPartyAuthorization,
  type ThirdPartyAuthorizationOptions,
  type ThirdPartyInputRequiredResult,
  type UrlElicitationInputRequest,
} from './third-party/elicitation.js';
export { ThirdPartyTokenError, ThirdPartyAuthorizationRequiredError, type ThirdPartyErrorCode } from './third-party/errors.js';
export type { ThirdPartyTokens, ThirdPartyTokenRequestOptions } from './third-party/tokens.js';
