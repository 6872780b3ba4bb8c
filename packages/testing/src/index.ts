export {
  startTestAuthorizationServer,
  type StartTestAuthorizationServerOptions,
  type TestAuthorizationServer,
  type TestUser,
  type TestClient,
  type TokenRequestOptions,
  type AuthorizeOptions,
  type IssuedTokens,
  type RotatedKeys,
  type RegisteredClient,
} from './test-authorization-server.js';
export {
  assertChallenge,
  assertUnauthorized,
  assertInvalidToken,
  assertInsufficientScope,
  assertAuthorized,
  getBearerChallenge,
  parseBearerChallenge,
  type BearerChallenge,
  type ChallengeExpectation,
} from './challenge.js';
export { ResponseAssertionError, describeResponse, type ResponseLike } from './response-report.js';
export { startClientMetadataHost, type ClientMetadataHost } from './client-metadata-host.js';
export { createLoopbackCertificate, type LoopbackCertificate } from './loopback-certificate.js';
export { startLoopbackServer, type LoopbackServer, type LoopbackServerOptions, type RequestListener } from './loopback-server.js';
export { mcpRequest, callTool, type McpRequestOptions } from './mcp-request.js';
export { assertAuthExtensions, discoverExtensions, type AdvertisedExtensions } from './auth-extensions.js';
export {
  openMcpSession,
  McpHandshakeError,
  type McpConnectionOptions,
  type McpSession,
  type McpSessionRequestOptions,
} from './mcp-session.js';
export {
  MCP_PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  readMcpResponse,
  encodeMcpHeaderValue,
  type McpResponse,
  type McpExchange,
  type McpHeaders,
  type McpOutgoingRequest,
} from './mcp-wire.js';
export { decodeAccessToken, waitUntilExpired, type AccessTokenClaims } from './jwt.js';
export {
  runCodeFlow,
  fetchAsEndpoints,
  AuthorizationFlowError,
  type AsEndpoints,
  type CodeFlowInput,
  type TokenResponse,
} from './code-flow.js';
export { HeadlessBrowser, type BrowserPage, type FollowResult, type HeadlessBrowserOptions } from './headless-browser.js';
export { createPkcePair } from './pkce.js';
export {
  startTestIdp,
  ID_JAG_TOKEN_TYPE,
  type StartTestIdpOptions,
  type TestIdp,
  type TestIdpClient,
  type TestIdpGrant,
} from './test-idp.js';
export { startThirdPartyProvider } from './third-party/provider.js';
export type {
  StartThirdPartyProviderOptions,
  ThirdPartyProvider,
  ThirdPartyUser,
  ThirdPartyFile,
  ThirdPartyClient,
  ThirdPartyGrant,
  RecordedRequest,
  ResponseIssBehaviour,
} from './third-party/provider-options.js';
export {
  completeUrlElicitation,
  ConnectFlowError,
  type CompleteUrlElicitationOptions,
  type UrlElicitationResult,
} from './third-party/url-elicitation.js';
export type { ConnectFlowErrorCode } from './third-party/connect-pages.js';
