import { ERR, McpAuthError } from './errors.js';
import type { ClientInformation, ServerBinding, StoredDpopKey, StoredTokens } from './store.js';
import { assertAllowedUrl, type UrlPolicy } from './url.js';

/**
 * MCP Authorization Server Binding (client-registration §Authorization Server Binding; discovery
 * §Authorization Server Location): every credential the client holds belongs to the one
 * authorization server that issued it, keyed by its `issuer`, and is never sent to another.
 * The authorization server is named by the MCP server's Protected Resource Metadata, so a
 * credential without an issuer would go to whichever server a (malicious) MCP server names.
 */

/** The parts of the client options that carry credentials (structural, to avoid an import cycle). */
export interface CredentialOptions {
  clientCredentials?: { client_id?: unknown; issuer?: unknown } | undefined;
  jwtBearer?: { client_id?: unknown; issuer?: unknown; assertion?: unknown } | undefined;
  preRegistered?: readonly { client_id?: unknown; issuer?: unknown }[] | undefined;
}

/** RFC 8414 §2: an issuer is an https URL (http only on loopback here) without query or fragment. */
function assertIssuer(value: unknown, what: string, policy: UrlPolicy): void {
  if (typeof value !== 'string' || !value) {
    throw new McpAuthError(
      ERR.INVALID_ARGUMENT,
      `${what} is required: client credentials (secret, private key, assertion) are sent only to the authorization server that issued them; without an issuer, any MCP server could name its own authorization server and receive them`,
    );
  }
  let url: URL;
  try {
    url = assertAllowedUrl(value, what, policy);
  } catch (err) {
    throw new McpAuthError(ERR.INVALID_ARGUMENT, (err as Error).message, { cause: err });
  }
  if (url.search || url.hash || value.includes('#') || value.includes('?')) {
    throw new McpAuthError(ERR.INVALID_ARGUMENT, `${what} must be an issuer identifier without query or fragment (RFC 8414 §2)`);
  }
}

/**
 * Configuration check, before any request: the machine grants' credentials and every
 * pre-registered client name the issuer they belong to.
 */
export function assertCredentialsBound(options: CredentialOptions, policy: UrlPolicy): void {
  const machine = [
    ['clientCredentials', options.clientCredentials],
    ['jwtBearer', options.jwtBearer],
  ] as const;
  for (const [name, config] of machine) {
    if (config === undefined) continue;
    if (!config || typeof config !== 'object') throw new McpAuthError(ERR.INVALID_ARGUMENT, `"${name}" must be an object`);
    if (typeof config.client_id !== 'string' || !config.client_id) {
      throw new McpAuthError(ERR.INVALID_ARGUMENT, `"${name}.client_id" is required`);
    }
    assertIssuer(config.issuer, `"${name}.issuer"`, policy);
  }
  if (options.jwtBearer && typeof options.jwtBearer.assertion !== 'function') {
    throw new McpAuthError(ERR.INVALID_ARGUMENT, '"jwtBearer.assertion" must be a function');
  }
  if (options.preRegistered !== undefined && !Array.isArray(options.preRegistered)) {
    throw new McpAuthError(ERR.INVALID_ARGUMENT, '"preRegistered" must be an array');
  }
  options.preRegistered?.forEach((p, i) => {
    if (!p || typeof p.client_id !== 'string' || !p.client_id) {
      throw new McpAuthError(ERR.INVALID_ARGUMENT, `"preRegistered[${i}].client_id" is required`);
    }
    assertIssuer(p.issuer, `"preRegistered[${i}].issuer"`, policy);
  });
}

/**
 * The check in front of every request that authenticates the client (token, revocation): the
 * client record, the server binding and the authorization server metadata the request is built
 * from must all name the same issuer.
 */
export function assertClientBoundTo(binding: ServerBinding, client: ClientInformation): void {
  if (client.issuer !== binding.issuer || binding.as_metadata.issuer !== binding.issuer) {
    throw new McpAuthError(
      ERR.AS_MISMATCH,
      `client credentials of ${String(client.issuer)} refused for the authorization server ${String(binding.as_metadata.issuer)}`,
    );
  }
}

/** A stored registration is used only with the issuer it says it belongs to, whatever the store returned. */
export function boundClient(record: ClientInformation | undefined, issuer: string): ClientInformation | undefined {
  return record && record.issuer === issuer ? record : undefined;
}

/** A stored record is used only for the (issuer, resource) it says it belongs to, whatever the store returned. */
export function boundRecord<T extends StoredTokens | StoredDpopKey>(record: T | undefined, binding: ServerBinding): T | undefined {
  return record && record.issuer === binding.issuer && record.resource === binding.resource ? record : undefined;
}
