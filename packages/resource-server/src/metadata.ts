/** RFC 9728 §2 Protected Resource Metadata, as served by this package. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
  resource_name?: string;
  resource_documentation?: string;
  /** RFC 9728 §2 / RFC 9449 §5.2: DPoP proof algorithms accepted (only when DPoP is on). */
  dpop_signing_alg_values_supported?: string[];
  /** RFC 9728 §2: `true` when only DPoP-bound tokens are accepted. */
  dpop_bound_access_tokens_required?: boolean;
  [extra: string]: unknown;
}

export interface ProtectedResourceMetadataOptions {
  resource: string;
  authorizationServers: readonly string[];
  scopesSupported?: readonly string[];
  resourceName?: string;
  resourceDocumentation?: string;
  /** Extra RFC 9728 members (e.g. `resource_policy_uri`); cannot override the ones above. */
  extraMetadata?: Readonly<Record<string, unknown>>;
  /** DPoP: the accepted proof algorithms and whether Bearer is refused. */
  dpop?: { algorithms: readonly string[]; required: boolean };
}

/**
 * Builds the RFC 9728 document. `offline_access` is never listed (MCP §Refresh Tokens: a
 * refresh token is not a resource requirement). Only `header` is a supported bearer method
 * (MCP §Access Token Usage).
 */
export function protectedResourceMetadata(options: ProtectedResourceMetadataOptions): ProtectedResourceMetadata {
  const doc: ProtectedResourceMetadata = {
    ...options.extraMetadata,
    resource: options.resource,
    authorization_servers: [...options.authorizationServers],
    bearer_methods_supported: ['header'],
  };
  if (options.scopesSupported !== undefined) {
    doc.scopes_supported = options.scopesSupported.filter((s) => s !== 'offline_access');
  }
  if (options.resourceName !== undefined) doc.resource_name = options.resourceName;
  if (options.resourceDocumentation !== undefined) doc.resource_documentation = options.resourceDocumentation;
  if (options.dpop !== undefined) {
    doc.dpop_signing_alg_values_supported = [...options.dpop.algorithms];
    doc.dpop_bound_access_tokens_required = options.dpop.required;
  } else {
    delete doc.dpop_signing_alg_values_supported;
    delete doc.dpop_bound_access_tokens_required;
  }
  return doc;
}
