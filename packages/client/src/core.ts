// @mcp-auth-kit/client/core: the request/response building blocks McpAuthClient is made of, for
// hosts that run the flow themselves (README "API"). They throw the McpAuthError of the main entry.
export { parseWwwAuthenticate, bearerChallenge, oauthChallenge, type Challenge } from './www-authenticate.js';
export { dpopAlgorithm } from './dpop.js';
export { assertAllowedUrl, resourceMatchesServer, serverKey, type UrlPolicy } from './url.js';
export type { FetchLike, HttpDeps } from './http.js';
export { isPrivateAddress, assertPublicHost, assertEgressAllowed, type Resolver } from './network.js';
export { networkFailureReason } from './unreachable.js';
export {
  processProtectedResourceMetadataResponse,
  discoverProtectedResource,
  processAuthorizationServerMetadataResponse,
  discoverAuthorizationServer,
  assertPkceS256,
  type ProtectedResourceMetadata,
  type AuthorizationServerMetadata,
} from './discovery.js';
export { selectScope, unionScope, scopeCovers, type ScopeSelectionInput } from './scope.js';
export { startLoopbackListener, type LoopbackListener, type LoopbackListenerOptions, type WaitForCallbackOptions } from './loopback.js';
export { validateAuthorizationResponse, requestIdJag, JWT_BEARER_GRANT, type PrivateKeyInput, type IdJagRequest } from './oauth.js';
export {
  resolveClient,
  dynamicRegistration,
  chooseAuthMethod,
  type PreRegisteredClient,
  type RegistrationContext,
  type RegistrationOptions,
} from './registration.js';
export type { ClientInformation } from './store.js';
export { checkElicitationUrl, type ElicitationTarget } from './elicitation/elicitation-url.js';
export { urlElicitationPrompt, urlElicitationsOf, type UrlElicitationPrompt } from './elicitation/url-elicitation-request.js';
