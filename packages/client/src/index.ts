export { ERR, McpAuthError, type McpAuthErrorCode, type McpAuthErrorOptions } from './errors.js';
export { parseWwwAuthenticate, bearerChallenge, oauthChallenge, type Challenge } from './www-authenticate.js';
export { dpopAlgorithm } from './dpop.js';
export { authorizationServerMetadataUrls, isLoopbackHost, protectedResourceMetadataUrls } from '@mcp-auth-kit/protocol';
export { assertAllowedUrl, resourceMatchesServer, serverKey, type UrlPolicy } from './url.js';
export type { FetchLike } from './http.js';
export { isPrivateAddress, assertPublicHost, assertEgressAllowed, type Resolver } from './network.js';
export {
  processProtectedResourceMetadataResponse,
  discoverProtectedResource,
  processAuthorizationServerMetadataResponse,
  discoverAuthorizationServer,
  assertPkceS256,
  type ProtectedResourceMetadata,
  type AuthorizationServerMetadata,
} from './discovery.js';
export { selectScope, unionScope, splitScope, scopeCovers, type ScopeSelectionInput } from './scope.js';
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
export { startLoopbackListener, type LoopbackListener, type LoopbackListenerOptions, type WaitForCallbackOptions } from './loopback.js';
export { validateAuthorizationResponse, requestIdJag, JWT_BEARER_GRANT, type PrivateKeyInput, type IdJagRequest } from './oauth.js';
export {
  resolveClient,
  dynamicRegistration,
  chooseAuthMethod,
  type PreRegisteredClient,
  type RegistrationContext,
} from './registration.js';
export { McpAuthClient, type ServerStatus } from './client/mcp-auth-client.js';
export type { AccessCheck } from './client/token-check.js';
export type { SignedInAccount } from './client/signed-in-account.js';
export { createAuthFetch, createSdkAuthProvider } from './client/sdk-adapters.js';
export { enterpriseManagedAssertion, type EnterpriseManagedOptions } from './client/enterprise-managed.js';
export type { JwtBearerConfig, McpAuthClientOptions, McpAuthEvent, ClientCredentialsConfig } from './client/options.js';
export { buildClientMetadataDocument, type ClientMetadataDocumentInput } from './cimd.js';
