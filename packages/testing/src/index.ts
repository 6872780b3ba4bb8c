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
  type ResponseLike,
} from './challenge.js';
export { startClientMetadataHost, type ClientMetadataHost } from './client-metadata-host.js';
export { createLoopbackCertificate, type LoopbackCertificate } from './loopback-certificate.js';
export { startLoopbackServer, type LoopbackServer, type RequestListener } from './loopback-server.js';
export { mcpRequest, callTool, MCP_PROTOCOL_VERSION, type McpRequestOptions, type McpResponse } from './mcp-request.js';
export { decodeAccessToken, waitUntilExpired, type AccessTokenClaims } from './jwt.js';
export {
  runCodeFlow,
  fetchAsEndpoints,
  AuthorizationFlowError,
  type AsEndpoints,
  type CodeFlowInput,
  type TokenResponse,
} from './code-flow.js';
export { HeadlessBrowser, type BrowserPage, type FollowResult } from './headless-browser.js';
export { createPkcePair } from './pkce.js';
