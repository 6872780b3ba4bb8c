import { protectedResourceMetadataUrl } from './resource_uri.js';

/** RFC 9728 §2 Protected Resource Metadata, as served by this package. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
  resource_name?: string;
  resource_documentation?: string;
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
}

/**
 * Builds the RFC 9728 document. `offline_access` is never listed (MCP §Refresh Tokens: a
 * refresh token is not a resource requirement). Only `header` is a supported bearer method
 * (MCP §Access Token Usage).
 */
export function protectedResourceMetadata(options: ProtectedResourceMetadataOptions): ProtectedResourceMetadata {
  const doc: ProtectedResourceMetadata = {
    ...(options.extraMetadata ?? {}),
    resource: options.resource,
    authorization_servers: [...options.authorizationServers],
    bearer_methods_supported: ['header'],
  };
  if (options.scopesSupported !== undefined) {
    doc.scopes_supported = options.scopesSupported.filter((s) => s !== 'offline_access');
  }
  if (options.resourceName !== undefined) doc.resource_name = options.resourceName;
  if (options.resourceDocumentation !== undefined) doc.resource_documentation = options.resourceDocumentation;
  return doc;
}

export { protectedResourceMetadataUrl };
