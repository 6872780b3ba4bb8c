import { authorizationServerMetadataUrls, issuerProblem, protectedResourceMetadataUrls, visibleText } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthError, type McpAuthErrorCode } from './errors.js';
import { guardedGet, readJsonObject, type HttpDeps } from './http.js';
import { networkFailureReason } from './unreachable.js';
import { resourceMatchesServer } from './url.js';

/** RFC 9728 Protected Resource Metadata (the fields the client uses; others are kept). */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  [key: string]: unknown;
}

/** RFC 8414 / OIDC Discovery metadata (the fields the client uses; others are kept). */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  registration_endpoint?: string;
  revocation_endpoint?: string;
  scopes_supported?: string[];
  code_challenge_methods_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
  grant_types_supported?: string[];
  authorization_response_iss_parameter_supported?: boolean;
  client_id_metadata_document_supported?: boolean;
  [key: string]: unknown;
}

/** The JSON object a metadata `response` (named `what` in errors) holds: `notFound` unless HTTP 200, `invalid` unless an object. */
async function metadataObject(
  response: Response,
  what: string,
  notFound: McpAuthErrorCode,
  invalid: McpAuthErrorCode,
): Promise<Record<string, unknown>> {
  if (response.status !== 200) {
    throw new McpAuthError(notFound, `${what} request answered HTTP ${response.status}`, { status: response.status });
  }
  const body = await readJsonObject(response);
  if (!body) throw new McpAuthError(invalid, `${what} is not a JSON object`);
  return body;
}

/**
 * Validates a PRM response: JSON object, `resource` string that identifies `serverUrl`
 * (RFC 9728 §3.3), at least one `authorization_servers` entry (MCP). `resource` is returned as
 * published: it is the exact `resource` parameter to send (RFC 8707).
 */
export async function processProtectedResourceMetadataResponse(
  serverUrl: string | URL,
  response: Response,
): Promise<ProtectedResourceMetadata> {
  const body = await metadataObject(response, 'protected resource metadata', ERR.PRM_NOT_FOUND, ERR.PRM_INVALID);
  const { resource, authorization_servers: servers, scopes_supported: scopes } = body;
  if (typeof resource !== 'string' || !resource) {
    throw new McpAuthError(ERR.PRM_INVALID, 'protected resource metadata has no "resource"');
  }
  if (!resourceMatchesServer(resource, serverUrl)) {
    throw new McpAuthError(
      ERR.PRM_RESOURCE_MISMATCH,
      `protected resource metadata "resource" (${resource}) does not identify the MCP server ${String(serverUrl)}`,
    );
  }
  if (!Array.isArray(servers) || servers.length === 0 || !servers.every((s) => typeof s === 'string' && s)) {
    throw new McpAuthError(ERR.PRM_INVALID, 'protected resource metadata lists no "authorization_servers"');
  }
  if (scopes !== undefined && (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string'))) {
    throw new McpAuthError(ERR.PRM_INVALID, 'protected resource metadata "scopes_supported" is not a string array');
  }
  return body as ProtectedResourceMetadata;
}

/**
 * Fetches and validates the PRM, trying the URLs of {@link protectedResourceMetadataUrls} in order.
 * A host that does not answer is not asked again for its other URLs; when no URL got an HTTP
 * answer the error is `SERVER_UNREACHABLE` (the server is down), not `PRM_NOT_FOUND` (it answered 404).
 */
export async function discoverProtectedResource(
  serverUrl: string | URL,
  deps: HttpDeps,
  resourceMetadata?: string,
): Promise<{ metadata: ProtectedResourceMetadata; url: URL }> {
  const candidates = protectedResourceMetadataUrls(serverUrl, resourceMetadata);
  if (resourceMetadata) candidates.push(...protectedResourceMetadataUrls(serverUrl));
  const server = new URL(String(serverUrl));
  const { found, attempts } = await firstAnswer(candidates, deps, 'protected resource metadata URL');
  // a document that fails validation is final: no other URL is tried
  if (found) return { metadata: await processProtectedResourceMetadataResponse(serverUrl, found.res), url: found.url };
  const down = attempts.unreachable();
  if (down) {
    const who =
      down.url.origin === server.origin ? `the MCP server at ${server.href}` : `the protected resource metadata URL ${down.url.href}`;
    throw new McpAuthError(ERR.SERVER_UNREACHABLE, `${who} did not answer (${down.reason})`, { cause: down.cause });
  }
  throw new McpAuthError(
    ERR.PRM_NOT_FOUND,
    `the MCP server at ${server.href} answered, but publishes no protected resource metadata (RFC 9728): ${attempts.summary()}`,
    attempts.errorOptions(),
  );
}

/**
 * The first of `urls`, in order, that answers HTTP 200 (its body unread), and what the others
 * answered. Only an HTTP failure moves on to the next URL; a host that does not answer is not
 * asked again for its other URLs. A refusal by the egress policy (`McpAuthError`) ends the search.
 */
async function firstAnswer(
  urls: readonly URL[],
  deps: HttpDeps,
  purpose: string,
): Promise<{ found?: { url: URL; res: Response }; attempts: Attempts }> {
  const attempts = new Attempts();
  for (const url of urls) {
    if (attempts.silent(url)) continue;
    let res: Response;
    try {
      res = await guardedGet(url, deps, purpose);
    } catch (err) {
      if (err instanceof McpAuthError) throw err;
      attempts.noAnswer(url, err);
      continue;
    }
    if (res.status === 200) return { found: { url, res }, attempts };
    await res.body?.cancel();
    attempts.answered(url, res.status);
  }
  return { attempts };
}

/** What the metadata URLs of one discovery answered, so "down" and "not there" read differently. */
class Attempts {
  private readonly statuses: string[] = [];
  private readonly down = new Map<string, { url: URL; reason: string; cause: unknown }>();
  lastStatus: number | undefined;
  lastError: unknown;

  /** True when this URL's host already failed to answer (asking it again only waits longer). */
  silent(url: URL): boolean {
    return this.down.has(url.origin);
  }
  noAnswer(url: URL, cause: unknown): void {
    const reason = networkFailureReason(cause) ?? (cause instanceof Error ? cause.message : String(cause));
    this.down.set(url.origin, { url, reason, cause });
    this.lastError = cause;
  }
  answered(url: URL, status: number): void {
    this.statuses.push(`HTTP ${status} from ${url.href}`);
    this.lastStatus = status;
    this.lastError = new Error(`HTTP ${status} from ${url.href}`);
  }
  /** The host that did not answer, when no URL got an HTTP answer at all. */
  unreachable(): { url: URL; reason: string; cause: unknown } | undefined {
    return this.statuses.length === 0 ? this.down.values().next().value : undefined;
  }
  summary(): string {
    const silent = [...this.down.values()].map((d) => `${d.url.origin} did not answer (${d.reason})`);
    return [...this.statuses, ...silent].join('; ');
  }
  /** The `cause` and last HTTP `status` of a "publishes no metadata" error. */
  errorOptions(): { cause: unknown; status?: number } {
    return { cause: this.lastError, ...(this.lastStatus !== undefined && { status: this.lastStatus }) };
  }
}

/**
 * Validates an AS metadata response. RFC 8414 §3.3 / OIDC Discovery §4.3: `issuer` must be
 * identical (simple string comparison) to the issuer identifier the URL was built from.
 */
export async function processAuthorizationServerMetadataResponse(
  expectedIssuer: string,
  response: Response,
): Promise<AuthorizationServerMetadata> {
  const body = await metadataObject(response, 'authorization server metadata', ERR.AS_METADATA_NOT_FOUND, ERR.AS_METADATA_INVALID);
  if (body.issuer !== expectedIssuer) {
    throw new McpAuthError(
      ERR.AS_ISSUER_MISMATCH,
      `authorization server metadata "issuer" (${visibleText(body.issuer)}) is not the expected issuer ${visibleText(expectedIssuer)}`,
    );
  }
  for (const key of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint'] as const) {
    if (body[key] !== undefined && typeof body[key] !== 'string') {
      throw new McpAuthError(ERR.AS_METADATA_INVALID, `authorization server metadata "${key}" is not a string`);
    }
  }
  if (typeof body.token_endpoint !== 'string') {
    throw new McpAuthError(ERR.AS_METADATA_INVALID, 'authorization server metadata has no "token_endpoint"');
  }
  assertMetadataShape(body);
  return body as AuthorizationServerMetadata;
}

/** RFC 8414 §2 members the client reads, by the JSON type the RFC gives them. */
const STRING_MEMBERS = ['revocation_endpoint', 'introspection_endpoint', 'jwks_uri'] as const;
const STRING_ARRAY_MEMBERS = [
  'scopes_supported',
  'response_types_supported',
  'grant_types_supported',
  'code_challenge_methods_supported',
  'token_endpoint_auth_methods_supported',
  'revocation_endpoint_auth_methods_supported',
  'dpop_signing_alg_values_supported',
] as const;
const BOOLEAN_MEMBERS = ['authorization_response_iss_parameter_supported', 'client_id_metadata_document_supported'] as const;

/**
 * The metadata is kept in the store with the server binding and read by every later command, so
 * it is bounded (real documents are a few KiB).
 */
export const MAX_AS_METADATA_BYTES = 64 * 1024;

/**
 * Refuses AS metadata whose members have the wrong JSON type (RFC 8414 §2) with a clear error,
 * rather than a TypeError where a member is used, and metadata too large to keep.
 */
function assertMetadataShape(body: Record<string, unknown>): void {
  const invalid = (key: string, what: string) =>
    new McpAuthError(ERR.AS_METADATA_INVALID, `authorization server metadata "${key}" is not ${what}`);
  for (const key of STRING_MEMBERS) if (body[key] !== undefined && typeof body[key] !== 'string') throw invalid(key, 'a string');
  for (const key of STRING_ARRAY_MEMBERS) {
    const value = body[key];
    if (value !== undefined && !(Array.isArray(value) && value.every((v) => typeof v === 'string'))) {
      throw invalid(key, 'an array of strings');
    }
  }
  for (const key of BOOLEAN_MEMBERS) if (body[key] !== undefined && typeof body[key] !== 'boolean') throw invalid(key, 'a boolean');
  const size = Buffer.byteLength(JSON.stringify(body));
  if (size > MAX_AS_METADATA_BYTES) {
    throw new McpAuthError(
      ERR.AS_METADATA_INVALID,
      `authorization server metadata is ${size} bytes, more than the ${MAX_AS_METADATA_BYTES} a client keeps; refused`,
    );
  }
}

/**
 * Security Considerations, Authorization Code Protection: refuse an AS whose metadata does not
 * list `S256` in `code_challenge_methods_supported` (absent means no PKCE).
 */
export function assertPkceS256(as: AuthorizationServerMetadata): void {
  const methods = as.code_challenge_methods_supported;
  if (!Array.isArray(methods) || !methods.includes('S256')) {
    throw new McpAuthError(
      ERR.PKCE_NOT_SUPPORTED,
      `authorization server ${as.issuer} does not advertise PKCE S256 in code_challenge_methods_supported; refusing to proceed`,
    );
  }
}

/**
 * Fetches AS metadata trying {@link authorizationServerMetadataUrls} in order. An issuer that does
 * not answer is `SERVER_UNREACHABLE`; one that answers without metadata `AS_METADATA_NOT_FOUND`.
 * An issuer that is not in canonical form (RFC 8414 §2; whitespace or controls the URL parser
 * would drop) is refused before any request: it would be stored and printed as sent.
 */
export async function discoverAuthorizationServer(issuer: string, deps: HttpDeps): Promise<AuthorizationServerMetadata> {
  const problem = issuerProblem(issuer);
  if (problem) {
    throw new McpAuthError(
      ERR.AS_METADATA_INVALID,
      `the authorization server identifier "${visibleText(issuer)}" is refused: it ${problem} (RFC 8414 §2)`,
    );
  }
  const { found, attempts } = await firstAnswer(authorizationServerMetadataUrls(issuer), deps, 'authorization server metadata URL');
  if (found) return processAuthorizationServerMetadataResponse(issuer, found.res);
  const down = attempts.unreachable();
  if (down) {
    throw new McpAuthError(ERR.SERVER_UNREACHABLE, `the authorization server at ${issuer} did not answer (${down.reason})`, {
      cause: down.cause,
    });
  }
  throw new McpAuthError(
    ERR.AS_METADATA_NOT_FOUND,
    `the authorization server ${issuer} answered, but publishes no metadata (RFC 8414 / OpenID Connect Discovery): ${attempts.summary()}`,
    attempts.errorOptions(),
  );
}
