export { classifyIpAddress, isLoopbackHost, isSpecialUseAddress, parseIPv4, parseIPv6, type AddressClass } from './address.js';
export { checkRedirectUri, isNativeRedirectUri, redirectUriKind, type RedirectUriCheck, type RedirectUriKind } from './redirect-uri.js';
export {
  ANY_ADDRESS,
  PUBLIC_ONLY,
  allowsEveryAddress,
  checkEgress,
  checkEgressHost,
  egressPolicyForPeer,
  type EgressDecision,
  type EgressPolicy,
  type PeerEgressOptions,
} from './egress.js';
export {
  EgressRefusedError,
  createEgressConnector,
  createEgressDispatcher,
  egressRefusal,
  resolveEgress,
  type EgressConnector,
  type EgressConnectorOptions,
  type EgressDispatcher,
  type EgressResolver,
} from './egress-connector.js';
