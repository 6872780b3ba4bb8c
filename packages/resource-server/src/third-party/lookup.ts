import type { McpAuthInfo } from '../types.js';
import { ThirdPartyTokenError } from './errors.js';
import type { ThirdPartyTokenRequestOptions, ThirdPartyTokens } from './tokens.js';

/** Options of {@link thirdPartyToken}. */
export interface ThirdPartyTokenOptions extends ThirdPartyTokenRequestOptions {
  /** The exchanges to use (from `createThirdPartyTokens`); default: those of the middleware that set `authInfo`. */
  tokens?: ThirdPartyTokens;
}

// The middleware's exchanges, found from a request's auth info by its `resource`: the one URL
// object a resource server sets on every request (ReadonlyUrl), which stays the same object
// when an app or an SDK transport copies the auth info. Weak: a closed server leaves nothing.
const byResource = new WeakMap<object, ThirdPartyTokens>();

/** Makes `thirdPartyToken` find `tokens` for the auth info whose `resource` is this URL object. */
export function bindThirdPartyTokens(resource: URL, tokens: ThirdPartyTokens): void {
  byResource.set(resource, tokens);
}

export function unbindThirdPartyTokens(resource: URL): void {
  byResource.delete(resource);
}

/**
 * From a tool handler: the provider's access token for the user whose MCP access token the
 * request carried, obtained by RFC 8693 token exchange at the authorization server (and cached
 * until shortly before it expires). The MCP token is sent to that authorization server only;
 * call the provider's API with the result, never with `authInfo.token`.
 *
 * Wrap the handler in `withThirdPartyAuthorization` so that the user is asked to connect the
 * provider (a URL-mode elicitation) when they have not.
 *
 * @param authInfo `extra.authInfo` (SDK v1), `ctx.http.authInfo` (SDK v2) or `req.auth`, as set by
 *   a resource server created with the `thirdParty` option (or pass `options.tokens`)
 * @param provider the provider's short name at the authorization server, e.g. `drive`
 * @throws {ThirdPartyAuthorizationRequiredError} the user has not connected the provider
 * @throws {ThirdPartyTokenError} any other refusal (`code` says which; the message is for users)
 */
export function thirdPartyToken(
  authInfo: McpAuthInfo | undefined,
  provider: string,
  options: ThirdPartyTokenOptions = {},
): Promise<string> {
  const { tokens: explicit, ...request } = options;
  const tokens =
    explicit ?? (typeof authInfo?.resource === 'object' && authInfo.resource !== null ? byResource.get(authInfo.resource) : undefined);
  if (tokens === undefined || authInfo === undefined) {
    return Promise.reject(
      new ThirdPartyTokenError(
        'not_configured',
        String(provider),
        authInfo === undefined
          ? 'This request has no MCP access token to exchange for a third-party token'
          : 'No third-party token configuration for this request: create the resource server with the thirdParty option, or pass { tokens }',
      ),
    );
  }
  return tokens.token(authInfo, provider, request);
}
