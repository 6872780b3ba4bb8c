export { classifyIpAddress, isLoopbackHost, isLoopbackListenAddress, isSpecialUseAddress, urlHost, type AddressClass } from './address.js';
export { authorizationServerMetadataUrls, protectedResourceMetadataUrl, protectedResourceMetadataUrls } from './metadata-urls.js';
export {
  checkRedirectUri,
  extraSchemeProblem,
  isNativeRedirectUri,
  redirectUriKind,
  type RedirectUriCheck,
  type RedirectUriKind,
  type RedirectUriOptions,
} from './redirect-uri.js';
export { ConfigError, INVALID_CONFIG } from './config-error.js';
export { escapeHtml } from './html.js';
export { ASYMMETRIC_JWS_ALGORITHMS, isCanonicalBase64url, isCanonicalCompactJws, isCanonicalSignedJws, JWS_COMPACT } from './jws.js';
export { pkceChallengeS256 } from './pkce.js';
export { decodeEntities, parseForm, parseForms, type ParsedForm } from './html-form.js';
export { canonicalResource } from './resource-uri.js';
export { isScopeToken, splitScope } from './scope.js';
export {
  buildChallenge,
  parseWwwAuthenticate,
  quoteValue,
  WwwAuthenticateParseError,
  type Challenge,
  type ChallengeParams,
} from './www-authenticate.js';
export {
  ANY_ADDRESS,
  PUBLIC_ONLY,
  allowsEveryAddress,
  checkEgressHost,
  egressPolicyForPeer,
  type EgressDecision,
  type EgressPolicy,
  type PeerEgressOptions,
} from './egress.js';
export {
  EgressRefusedError,
  tryCreateEgressDispatcher,
  egressRefusal,
  resolveEgress,
  type EgressConnector,
  type EgressConnectorOptions,
  type EgressDispatcher,
  type EgressResolver,
} from './egress-connector.js';
export {
  DEFAULT_REVOCATION_PREFIX,
  isGrantId,
  revocationChannel,
  revokedGrantKey,
  revokedGrantKeyPrefix,
  revokedGrantUntil,
  revokedGrantValue,
} from './revocation-signal.js';
export {
  displaySafeText,
  identityKey,
  isUsername,
  MAX_EMAIL_NAME_LENGTH,
  MAX_USERNAME_LENGTH,
  usernameProblem,
  type UsernameProblem,
} from './identity.js';
export {
  createTerminal,
  isVisibleText,
  joinText,
  ownLayout,
  terminalJson,
  terminalText,
  visibleText,
  MAX_COMBINING_MARKS,
  type Terminal,
  type TerminalStyle,
  type TerminalText,
} from './terminal-text.js';
export {
  MALFORMED_ERROR_CODE,
  MAX_ERROR_CODE_LENGTH,
  MAX_ERROR_DESCRIPTION_LENGTH,
  MAX_ISSUER_LENGTH,
  MAX_TOKEN_LIFETIME_SECONDS,
  isAccessTokenSyntax,
  isCanonicalIssuer,
  issuerProblem,
  oauthErrorCode,
  oauthErrorDescription,
  tokenLifetime,
} from './oauth-values.js';
export {
  AUTH_EXTENSIONS,
  CLIENT_CAPABILITIES_META_KEY,
  ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION,
  isAuthExtension,
  OAUTH_CLIENT_CREDENTIALS_EXTENSION,
  type AuthExtension,
} from './extensions.js';
