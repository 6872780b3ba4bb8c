export { classifyIpAddress, isLoopbackHost, isSpecialUseAddress, parseIPv4, parseIPv6, type AddressClass } from './address.js';
export { checkRedirectUri, isNativeRedirectUri, redirectUriKind, type RedirectUriCheck, type RedirectUriKind } from './redirect-uri.js';
