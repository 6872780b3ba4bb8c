/**
 * The part of oidc-provider's request context the storage reads (is this a refresh at the token
 * endpoint?). Declared here, without oidc-provider's types, because `OpenStoreOptions` is public
 * and the package's declarations stay free of oidc-provider's types.
 */
export interface RequestContext {
  oidc?: { route?: string; params?: Record<string, unknown> };
}
