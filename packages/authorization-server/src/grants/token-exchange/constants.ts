/**
 * The names of the RFC 8693 token exchange grant. Kept apart from the grant's code: the package's
 * public entry re-exports them, and its type declarations must not reach oidc-provider's types.
 */

/** RFC 8693 §2.1: the grant type. */
export const TOKEN_EXCHANGE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 8693 §3: an OAuth 2.0 access token (the subject token accepted, and the token issued). */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
