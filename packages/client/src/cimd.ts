import { ERR, McpAuthError } from './errors.js';
import { DEFAULTS } from './config/defaults.js';

export interface ClientMetadataDocumentInput {
  /** The https URL (with a path) where the document is served; it becomes the `client_id`. */
  clientId: string;
  clientName: string;
  /** Redirect URIs; loopback ones may omit the port (RFC 8252 §7.3 lets it vary). */
  redirectUris: string[];
  clientUri?: string;
  logoUri?: string;
  /** Default `['authorization_code', 'refresh_token']` (MCP Refresh Tokens: SHOULD include refresh_token). */
  grantTypes?: string[];
  /** Default: `native` when every redirect URI is loopback or a custom scheme, else `web`. */
  applicationType?: 'native' | 'web';
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/**
 * Builds a Client ID Metadata Document as MCP requires (Client Registration → CIMD): https
 * `client_id` URL with a path, equal to the document URL, with `client_name`, `redirect_uris`
 * and `token_endpoint_auth_method: "none"`. Serve the result as JSON at `clientId`.
 */
export function buildClientMetadataDocument(input: ClientMetadataDocumentInput): Record<string, unknown> {
  let url: URL;
  try {
    url = new URL(input.clientId);
  } catch {
    throw new McpAuthError(ERR.INVALID_ARGUMENT, 'clientId must be an absolute https URL');
  }
  if (url.protocol !== 'https:' || url.pathname === '/' || url.hash) {
    throw new McpAuthError(ERR.INVALID_ARGUMENT, 'clientId must be an https URL with a path and no fragment');
  }
  if (!input.clientName) throw new McpAuthError(ERR.INVALID_ARGUMENT, 'clientName is required');
  if (!input.redirectUris.length) throw new McpAuthError(ERR.INVALID_ARGUMENT, 'at least one redirect URI is required');
  let native = true;
  for (const r of input.redirectUris) {
    const u = new URL(r);
    const loopback = u.protocol === 'http:' && LOOPBACK.test(u.hostname);
    if (u.protocol === 'http:' && !loopback) {
      throw new McpAuthError(ERR.INVALID_ARGUMENT, `redirect URI ${r} must be https or loopback (Communication Security)`);
    }
    if (u.protocol === 'https:') native = false;
  }
  return {
    client_id: input.clientId,
    client_name: input.clientName,
    redirect_uris: input.redirectUris,
    grant_types: input.grantTypes ?? [...DEFAULTS.cimd.grantTypes],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    application_type: input.applicationType ?? (native ? 'native' : 'web'),
    ...(input.clientUri && { client_uri: input.clientUri }),
    ...(input.logoUri && { logo_uri: input.logoUri }),
  };
}
