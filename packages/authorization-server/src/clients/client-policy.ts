/**
 * MCP client rules applied to every client the provider builds (pre-registered, DCR, RFC 7592
 * updates, CIMD documents, stored records), through oidc-provider's synchronous
 * `extraClientMetadata.validator`, which runs before oidc-provider's own schema validation and
 * may adjust the metadata. What each source may set at all is decided by client-metadata-policy.ts.
 */
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { ResourceRegistry } from '../tokens/resources.js';
import { checkRedirectUri, redirectUriKind, type RedirectUriOptions } from '@mcp-auth-kit/protocol';
import {
  applyMetadataPolicy,
  type MetadataPolicyOptions,
  RESOURCE_SCOPE_PROPERTY,
  USERLESS_GRANTS,
  userlessGrantRule,
  type MetadataSource,
} from './client-metadata-policy.js';
import { looksNative, parseUrl } from '../http/urls.js';
import { refuseFetchedUrlFields } from './client-url-fields.js';

export { RESOURCE_SCOPE_PROPERTY };

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

/** The part of the Koa context oidc-provider passes to the validator (DCR and RFC 7592 only). */
export interface Ctx {
  oidc?: { route?: string; body?: Record<string, unknown>; client?: { clientSecret?: string } };
}

export interface ClientPolicyOptions {
  resources: ResourceRegistry;
  /** Seconds a DCR-issued client secret stays valid (0 = forever). */
  clientSecretTTL: number;
  /** `client_id`s of the clients in the server's configuration. */
  operatorClientIds: ReadonlySet<string>;
  /** The operator's extra private-use redirect schemes. */
  redirectUris?: RedirectUriOptions;
  /** Options of the metadata table (which sources may hold the JWT bearer grant). */
  metadataPolicy?: MetadataPolicyOptions;
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

/**
 * Where the metadata in the validator came from. oidc-provider passes the request context only
 * for DCR and RFC 7592 updates; configured clients are found before the store and before any
 * document fetch, and DCR ids are server-generated, so an https id that is not configured is a
 * fetched document and anything else a stored DCR record.
 */
export function metadataSource(ctx: Ctx | undefined, clientId: unknown, operatorClientIds: ReadonlySet<string>): MetadataSource {
  const route = ctx?.oidc?.route;
  if (route === 'registration') return 'registration';
  if (route === 'client_update') return 'client_update';
  if (typeof clientId === 'string' && operatorClientIds.has(clientId)) return 'operator';
  if (isCimdClientId(clientId)) return 'cimd';
  return 'stored';
}

/**
 * Defence in depth at the token endpoint (oidc-provider's allowedGrantTypeCheck asks
 * `client.grantTypeAllowed`): a grant without a user is refused unless the client is one the
 * operator configured and it authenticates (RFC 6749 §4.4), whatever its grant_types say.
 */
export function restrictUserlessGrants(provider: Provider, operatorClientIds: ReadonlySet<string>): void {
  const prototype = provider.Client.prototype;
  const listed = prototype.grantTypeAllowed;
  prototype.grantTypeAllowed = function grantTypeAllowed(this: InstanceType<Provider['Client']>, type: string): boolean {
    if (
      USERLESS_GRANTS.has(type) &&
      !(operatorClientIds.has(this.clientId) && userlessGrantRule('operator', this.tokenEndpointAuthMethod) === 'allow')
    ) {
      return false;
    }
    return listed.call(this, type);
  };
}

/** MCP client-registration §CIMD: the document MUST carry client_id, client_name, redirect_uris. */
function checkCimdDocument(metadata: Metadata, redirectUris: unknown[]): void {
  if (typeof metadata.client_name !== 'string' || !metadata.client_name.trim()) {
    invalid('client_id metadata document must include client_name');
  }
  if (redirectUris.length === 0) invalid('client_id metadata document must include redirect_uris');
  const url = parseUrl(metadata.client_id!);
  if (!url || url.pathname === '/' || url.pathname === '') invalid('client_id URL must contain a path');
}

/**
 * oidc-provider treats the registered scope of a client as an allowlist: resource scopes are not
 * an allowlist for user-delegated flows (MCP step-up); they are split off. Only an operator client
 * keeps them, as the limit of its client_credentials tokens (no other source may hold that grant).
 */
function splitResourceScopes(metadata: Metadata, resources: ResourceRegistry, source: MetadataSource): void {
  if (typeof metadata.scope !== 'string') return;
  const requested = metadata.scope.split(' ').filter(Boolean);
  const resourceScopes = requested.filter((s) => resources.allScopes.has(s));
  const rest = requested.filter((s) => !resources.allScopes.has(s));
  if (resourceScopes.length) {
    if (source === 'operator') metadata[RESOURCE_SCOPE_PROPERTY] = resourceScopes.join(' ');
    if (rest.length) metadata.scope = rest.join(' ');
    else delete metadata.scope;
  }
}

export function createClientPolicy(options: ClientPolicyOptions) {
  const { resources } = options;
  return function clientPolicy(ctx: Ctx | undefined, key: string, _value: unknown, metadata: Metadata): void {
    if (key !== RESOURCE_SCOPE_PROPERTY) return;
    refuseFetchedUrlFields(metadata);
    const route = ctx?.oidc?.route;
    const registering = route === 'registration' || route === 'client_update';
    const source = metadataSource(ctx, metadata.client_id, options.operatorClientIds);
    const refusals = applyMetadataPolicy(source, metadata, options.metadataPolicy);
    if (refusals.length) invalid(refusals.join('; '));
    const cimd = source === 'cimd';
    const redirectUris = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];

    if (cimd) checkCimdDocument(metadata, redirectUris);

    // OAuth 2.1 §7.12.2 / MCP security §Open redirection, RFC 8252 §7.1, §7.3: a scheme allowlist
    // (https, loopback http, reverse-domain private-use schemes), so an OS protocol handler nobody
    // listed is refused too. This runs for every client the provider builds, also when a stored
    // client is loaded at authorization time.
    for (const uri of redirectUris) {
      const check = checkRedirectUri(uri, options.redirectUris);
      if (!check.ok) invalidRedirect(check.reason);
    }

    // oidc-provider defaults application_type to web, and only native clients get any-port loopback: a client that omitted application_type but only has loopback / custom-scheme
    // redirect URIs can only be native; that gives it RFC 8252 §7.3 any-port loopback matching.
    // oidc-provider fills its default ("web") before this hook runs, so "omitted" is read from
    // the raw registration body (CIMD documents are adjusted before parsing, see cimd.ts).
    const rawBody = ctx?.oidc?.body;
    const omitted =
      metadata.application_type === undefined || (registering && rawBody !== undefined && rawBody.application_type === undefined);
    if (omitted) {
      metadata.application_type = looksNative(redirectUris, options.redirectUris) ? 'native' : 'web';
    }

    // MCP security §Communication: redirect URIs are loopback or https (web clients included).
    if (metadata.application_type === 'web') {
      for (const uri of redirectUris) {
        if (redirectUriKind(uri, options.redirectUris) === 'private-use') {
          invalidRedirect('redirect_uris of web clients must use https (http only on loopback)');
        }
      }
    }

    splitResourceScopes(metadata, resources, source);

    if (registering) {
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
