import { ERR, McpAuthError } from './errors.js';
import { boundClient } from './credential-binding.js';
import type { AuthorizationServerMetadata } from './discovery.js';
import type { HttpDeps } from './http.js';
import { registerClient } from './oauth.js';
import type { ClientInformation } from './store.js';
import { isNativeRedirectUri } from '@mcp-auth-kit/protocol';
import type { PrivateKeyInput } from './oauth.js';

/** Credentials a user obtained out of band for one authorization server. */
export interface PreRegisteredClient {
  /** The AS `issuer` these credentials were issued by (MCP Authorization Server Binding). */
  issuer: string;
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method?: 'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  privateKey?: PrivateKeyInput;
}

export interface RegistrationContext {
  as: AuthorizationServerMetadata;
  redirectUri: string;
}

export interface RegistrationOptions {
  clientName: string;
  preRegistered?: PreRegisteredClient[] | undefined;
  clientMetadataUrl?: string | undefined;
  /** Extra RFC 7591 metadata for DCR (client_uri, logo_uri, software_id …). */
  clientMetadata?: Record<string, unknown> | undefined;
  applicationType?: 'native' | 'web' | undefined;
  wantRefreshToken: boolean;
  onRegistrationNeeded?: ((ctx: RegistrationContext) => Promise<Omit<ClientInformation, 'issuer' | 'source'> | undefined>) | undefined;
}

/**
 * MCP Client Registration, in the spec's priority order: pre-registered (for this issuer) ▸
 * stored credentials for this issuer ▸ CIMD ▸ DCR ▸ the host's callback.
 * `stored` must come from the store keyed by `as.issuer`; it is ignored when its issuer differs.
 */
export async function resolveClient(
  opts: RegistrationOptions,
  ctx: RegistrationContext,
  stored: ClientInformation | undefined,
  deps: HttpDeps,
): Promise<ClientInformation> {
  const { as } = ctx;
  const pre = opts.preRegistered ?? [];
  const match = pre.find((p) => p.issuer === as.issuer);
  if (match) {
    const { privateKey: _k, ...rest } = match;
    return { ...rest, source: 'pre-registered' };
  }
  if (pre.length > 0) {
    throw new McpAuthError(
      ERR.AS_MISMATCH,
      `pre-registered client credentials are for ${pre.map((p) => p.issuer).join(', ')}, but the MCP server uses the authorization server ${as.issuer}; refusing to use them with another authorization server`,
    );
  }
  const own = boundClient(stored, as.issuer);
  if (own) {
    const cimdStillValid =
      own.source !== 'cimd' || (as.client_id_metadata_document_supported === true && own.client_id === opts.clientMetadataUrl);
    if (cimdStillValid) return own;
  }
  if (as.client_id_metadata_document_supported === true && opts.clientMetadataUrl) {
    return { issuer: as.issuer, client_id: opts.clientMetadataUrl, token_endpoint_auth_method: 'none', source: 'cimd' };
  }
  if (as.registration_endpoint) return dynamicRegistration(opts, ctx, deps);
  if (opts.onRegistrationNeeded) {
    const info = await opts.onRegistrationNeeded(ctx);
    if (info) return { ...info, client_id: String(info.client_id), issuer: as.issuer, source: 'host' };
  }
  throw new McpAuthError(
    ERR.REGISTRATION_UNAVAILABLE,
    `authorization server ${as.issuer} supports neither Client ID Metadata Documents (for a configured clientMetadataUrl) nor Dynamic Client Registration, and no pre-registered client is configured for it`,
  );
}

/** Picks the token endpoint auth method to register: `none` when allowed (public native client). */
export function chooseAuthMethod(as: AuthorizationServerMetadata): string {
  const listed = as.token_endpoint_auth_methods_supported;
  // metadata is checked on discovery; a binding stored by an older version may still hold another type
  const supported = Array.isArray(listed) ? listed : undefined;
  if (!supported || supported.includes('none')) return 'none';
  if (supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return 'none';
}

/** RFC 7591 DCR with the `application_type` MCP requires (native for loopback/custom-scheme redirects). */
export async function dynamicRegistration(opts: RegistrationOptions, ctx: RegistrationContext, deps: HttpDeps): Promise<ClientInformation> {
  const { as, redirectUri } = ctx;
  const applicationType = opts.applicationType ?? (isNativeRedirectUri(redirectUri) ? 'native' : 'web');
  const method = chooseAuthMethod(as);
  const metadata: Record<string, unknown> = {
    ...opts.clientMetadata,
    client_name: opts.clientName,
    redirect_uris: [redirectUri],
    grant_types: opts.wantRefreshToken ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: method,
    application_type: applicationType,
  };
  let registered: Record<string, unknown>;
  try {
    registered = await registerClient(as, metadata, deps);
  } catch (err) {
    // Client Registration: MAY retry with an adjusted application_type after a redirect-URI refusal.
    const code = err instanceof McpAuthError ? err.error : undefined;
    if (opts.applicationType || (code !== 'invalid_redirect_uri' && code !== 'invalid_client_metadata')) throw err;
    registered = await registerClient(as, { ...metadata, application_type: applicationType === 'native' ? 'web' : 'native' }, deps);
  }
  const clientId = registered.client_id;
  if (typeof clientId !== 'string' || !clientId) {
    throw new McpAuthError(ERR.REGISTRATION_REJECTED, 'registration response has no client_id');
  }
  const secret = typeof registered.client_secret === 'string' ? registered.client_secret : undefined;
  const authMethod =
    typeof registered.token_endpoint_auth_method === 'string'
      ? registered.token_endpoint_auth_method
      : secret
        ? 'client_secret_basic'
        : method;
  return {
    issuer: as.issuer,
    client_id: clientId,
    ...(secret !== undefined && { client_secret: secret }),
    token_endpoint_auth_method: authMethod,
    redirect_uri: redirectUri,
    source: 'dcr',
  };
}
