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
function issuerProblem(value: unknown, what: string, policy: UrlPolicy): string | undefined {
  if (typeof value !== 'string' || !value) {
    return `${what} is required: client credentials (secret, private key, assertion) are sent only to the authorization server that issued them; without an issuer, any MCP server could name its own authorization server and receive them`;
  }
  let url: URL;
  try {
    url = assertAllowedUrl(value, what, policy);
  } catch (err) {
    return (err as Error).message;
  }
  if (url.search || url.hash || value.includes('#') || value.includes('?')) {
    return `${what} must be an issuer identifier without query or fragment (RFC 8414 §2)`;
  }
  return undefined;
}

/** The problems of one credential entry (`name`: how they are named, e.g. `"clientCredentials`). */
function entryProblems(name: string, entry: { client_id?: unknown; issuer?: unknown } | undefined, policy: UrlPolicy): string[] {
  if (!entry || typeof entry !== 'object') return [`"${name}" must be an object`];
  const problems: string[] = [];
  if (typeof entry.client_id !== 'string' || !entry.client_id) problems.push(`"${name}.client_id" is required`);
  const issuer = issuerProblem(entry.issuer, `"${name}.issuer"`, policy);
  if (issuer !== undefined) problems.push(issuer);
  return problems;
}

/**
 * Configuration check, before any request: the machine grants' credentials and every
 * pre-registered client name the issuer they belong to. Every problem, one line each.
 */
export function credentialProblems(options: CredentialOptions, policy: UrlPolicy): string[] {
  const problems: string[] = [];
  if (options.clientCredentials !== undefined) problems.push(...entryProblems('clientCredentials', options.clientCredentials, policy));
  if (options.jwtBearer !== undefined) {
    problems.push(...entryProblems('jwtBearer', options.jwtBearer, policy));
    if (options.jwtBearer && typeof options.jwtBearer.assertion !== 'function') problems.push('"jwtBearer.assertion" must be a function');
  }
  if (options.preRegistered !== undefined && !Array.isArray(options.preRegistered)) problems.push('"preRegistered" must be an array');
  else {
    for (const [i, p] of (options.preRegistered ?? []).entries()) problems.push(...entryProblems(`preRegistered[${i}]`, p, policy));
  }
  return problems;
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
