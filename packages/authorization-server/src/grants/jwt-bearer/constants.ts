/**
 * The names of the ID-JAG JWT bearer grant. Kept apart from the grant's code: the package's
 * public entry re-exports them, and its type declarations must not reach oidc-provider's types.
 */

/** RFC 7523 §2.1: the grant type. */
export const JWT_BEARER_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Draft §7.2: what `authorization_grant_profiles_supported` names for this grant. */
export const ID_JAG_GRANT_PROFILE = 'urn:ietf:params:oauth:grant-profile:id-jag';
/** Draft §3: the JOSE `typ` of an ID-JAG. */
export const ID_JAG_TYP = 'oauth-id-jag+jwt';
