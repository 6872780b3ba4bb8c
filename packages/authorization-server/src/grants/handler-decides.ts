/**
 * oidc-provider checks `client.grantTypeAllowed(grant_type)` before a grant's handler runs and
 * answers `invalid_request` for a client whose `grant_types` do not list it. For the grants
 * registered here the handler decides who may use them, with RFC 6749 §5.2's `unauthorized_client`
 * and its own rules (ID-JAG: client sources; token exchange: configured MCP servers).
 */
import type Provider from 'oidc-provider';

export function handlerDecidesGrant(provider: Provider, grantType: string): void {
  const prototype = provider.Client.prototype;
  const listed = prototype.grantTypeAllowed;
  prototype.grantTypeAllowed = function grantTypeAllowed(this: InstanceType<Provider['Client']>, type: string): boolean {
    return type === grantType || listed.call(this, type);
  };
}
