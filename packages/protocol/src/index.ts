export { classifyIpAddress, isLoopbackHost, isSpecialUseAddress, parseIPv4, parseIPv6, type AddressClass } from './address.js';
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
