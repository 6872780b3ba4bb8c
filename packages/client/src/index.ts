// @mcp-auth-kit/client: what an MCP host needs (README "API"). The request/response building
// blocks under McpAuthClient are in ./core.ts (@mcp-auth-kit/client/core); the CLI is the package
// @mcp-auth-kit/cli, built on these two entries.
export { ERR, McpAuthError, type McpAuthErrorCode, type McpAuthErrorOptions } from './errors.js';
export type { FetchLike } from './http.js';
export {
  MemoryStore,
  DataStore,
  type AuthStore,
  type ClientInformation,
  type StoredTokens,
  type ServerBinding,
  type StoreData,
  type StoredDpopKey,
} from './store.js';
export { FileStore, defaultStoreDir, defaultStorePath, type FileStoreOptions } from './file-store.js';
export type { PrivateKeyInput } from './oauth.js';
export type { PreRegisteredClient, RegistrationContext } from './registration.js';
export type { LoopbackListenerOptions } from './loopback.js';
export type { ProtectedResourceMetadata, AuthorizationServerMetadata } from './discovery.js';
export { McpAuthClient, type ServerStatus } from './client/mcp-auth-client.js';
export type { AccessCheck } from './client/token-check.js';
export type { SignedInAccount } from './client/signed-in-account.js';
export { createAuthFetch, createSdkAuthProvider } from './client/sdk-adapters.js';
export { enterpriseManagedAssertion, type EnterpriseManagedOptions } from './client/enterprise-managed.js';
export { enterpriseSignIn, type EnterpriseSignIn, type EnterpriseSignInOptions } from './client/enterprise-sign-in.js';
export type { JwtBearerConfig, McpAuthClientOptions, McpAuthEvent, ClientCredentialsConfig } from './config/types.js';
export { buildClientMetadataDocument, type ClientMetadataDocumentInput } from './cimd.js';
export {
  createUrlElicitation,
  type ElicitationClient,
  type ElicitationHandlerContext,
  type ElicitationHandlerRequest,
  type UrlElicitation,
  type UrlElicitationAction,
  type UrlElicitationCapabilities,
  type UrlElicitationOptions,
} from './elicitation/url-elicitation.js';
export type { UrlElicitationPrompt } from './elicitation/url-elicitation-request.js';
export type { ElicitationTarget } from './elicitation/elicitation-url.js';
