/**
 * MCP client rules applied to every client the provider builds (pre-registered, DCR, RFC 7592
 * updates, CIMD documents), through oidc-provider's synchronous `extraClientMetadata.validator`,
 * which runs before oidc-provider's own schema validation and may adjust the metadata.
 */
import { errors } from 'oidc-provider';
import type { ResourceRegistry } from './resources.js';
import { checkRedirectUri, redirectUriKind } from '@mcp-auth-kit/protocol';
import { looksNative, parseUrl } from './urls.js';
import { refuseFetchedUrlFields } from './client-url-fields.js';

/** Holds the resource scopes a client registered (only used to limit client_credentials). */
export const RESOURCE_SCOPE_PROPERTY = 'mcp_resource_scope';

type Metadata = Record<string, unknown> & {
  client_id?: string;
  scope?: string;
  redirect_uris?: string[];
  application_type?: string;
  grant_types?: string[];
  client_name?: unknown;
  token_endpoint_auth_method?: string;
  client_secret?: string;
  client_secret_expires_at?: number;
};

interface Ctx {
  oidc?: { route?: string; body?: Record<string, unknown>; client?: { clientSecret?: string } };
}

export interface ClientPolicyOptions {
  resources: ResourceRegistry;
  /** Seconds a DCR-issued client secret stays valid (0 = forever). */
  clientSecretTTL: number;
}

function invalid(message: string): never {
  throw new errors.InvalidClientMetadata(message);
}

/** RFC 7591 §3.2.2 invalid_redirect_uri with our own description. */
function invalidRedirect(message: string): never {
  const error = new errors.InvalidRedirectUri();
  error.error_description = message;
  throw error;
}

export function isCimdClientId(clientId: unknown): boolean {
  return typeof clientId === 'string' && /^https:\/\//i.test(clientId);
}

export function createClientPolicy(options: ClientPolicyOptions) {
  const { resources } = options;
  return function clientPolicy(ctx: Ctx | undefined, key: string, _value: unknown, metadata: Metadata): void {
    if (key !== RESOURCE_SCOPE_PROPERTY) return;
    refuseFetchedUrlFields(metadata);
    const route = ctx?.oidc?.route;
    const registering = route === 'registration' || route === 'client_update';
    const cimd = isCimdClientId(metadata.client_id);
    const redirectUris = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];

    // MCP client-registration §CIMD: the document MUST carry client_id, client_name, redirect_uris.
    if (cimd) {
      if (typeof metadata.client_name !== 'string' || !metadata.client_name.trim()) {
        invalid('client_id metadata document must include client_name');
      }
      if (redirectUris.length === 0) invalid('client_id metadata document must include redirect_uris');
      const url = parseUrl(metadata.client_id!);
      if (!url || url.pathname === '/' || url.pathname === '') invalid('client_id URL must contain a path');
    }

    // OAuth 2.1 §7.12.2 / MCP security §Open redirection, RFC 8252 §7.1, §7.3: a scheme allowlist
    // (https, loopback http, reverse-domain private-use schemes), so an OS protocol handler nobody
    // listed is refused too. This runs for every client the provider builds, also when a stored
    // client is loaded at authorization time.
    for (const uri of redirectUris) {
      const check = checkRedirectUri(uri);
      if (!check.ok) invalidRedirect(check.reason);
    }

    // NOTES gotcha 2: a client that omitted application_type but only has loopback / custom-scheme
    // redirect URIs can only be native; that gives it RFC 8252 §7.3 any-port loopback matching.
    // oidc-provider fills its default ("web") before this hook runs, so "omitted" is read from
    // the raw registration body (CIMD documents are adjusted before parsing, see cimd.ts).
    const rawBody = ctx?.oidc?.body;
    const omitted = metadata.application_type === undefined || (registering && rawBody !== undefined && rawBody.application_type === undefined);
    if (omitted) {
      metadata.application_type = looksNative(redirectUris) ? 'native' : 'web';
    }

    // MCP security §Communication: redirect URIs are loopback or https (web clients included).
    if (metadata.application_type === 'web') {
      for (const uri of redirectUris) {
        if (redirectUriKind(uri) === 'private-use') {
          invalidRedirect('redirect_uris of web clients must use https (http only on loopback)');
        }
      }
    }

    // NOTES gotcha 3: resource scopes are not an allowlist for user-delegated flows (MCP step-up);
    // they are kept apart and only limit client_credentials tokens.
    if (typeof metadata.scope === 'string') {
      const requested = metadata.scope.split(' ').filter(Boolean);
      const resourceScopes = requested.filter((s) => resources.allScopes.has(s));
      const rest = requested.filter((s) => !resources.allScopes.has(s));
      if (resourceScopes.length) {
        metadata[RESOURCE_SCOPE_PROPERTY] = resourceScopes.join(' ');
        metadata.scope = rest.length ? rest.join(' ') : undefined;
        if (metadata.scope === undefined) delete metadata.scope;
      } else if (registering) {
        delete metadata[RESOURCE_SCOPE_PROPERTY];
      }
    } else if (registering) {
      delete metadata[RESOURCE_SCOPE_PROPERTY];
    }

    if (registering) {
      // A dynamically registered client acts for users only: a machine grant with no user and
      // no prior relationship would hand out resource access to anyone who can register.
      if (Array.isArray(metadata.grant_types) && metadata.grant_types.includes('client_credentials')) {
        invalid('client_credentials is only available to pre-registered clients');
      }
      // RFC 7591 §3.2.1: confidential DCR clients get secrets that expire, including a secret
      // first issued by an RFC 7592 update (oidc-provider issues it with expires_at 0 = never).
      const newSecret = route === 'registration' || (route === 'client_update' && !ctx?.oidc?.client?.clientSecret);
      if (
        newSecret &&
        options.clientSecretTTL > 0 &&
        metadata.token_endpoint_auth_method !== 'none' &&
        metadata.token_endpoint_auth_method !== 'private_key_jwt' &&
        typeof metadata.client_secret === 'string'
      ) {
        metadata.client_secret_expires_at = Math.floor(Date.now() / 1000) + options.clientSecretTTL;
      }
    }
  };
}
