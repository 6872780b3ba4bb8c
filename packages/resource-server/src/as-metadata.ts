import { authorizationServerMetadataUrls } from '@mcp-auth-kit/protocol';

/** The parts of RFC 8414 metadata the resource server uses. */
export interface AuthorizationServerMetadata {
  issuer: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
  /** RFC 8414 §2: where `thirdPartyToken` sends its RFC 8693 token exchange. */
  token_endpoint?: string;
}

export class MetadataError extends Error {
  constructor(
    message: string,
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'MetadataError';
  }
}

/**
 * Validates a metadata document against the issuer it was requested for (RFC 8414 §3.3: the
 * `issuer` member must be identical).
 * @throws {MetadataError}
 */
export function processMetadata(expectedIssuer: string, body: unknown): AuthorizationServerMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new MetadataError('metadata is not a JSON object');
  }
  const doc = body as Record<string, unknown>;
  if (doc.issuer !== expectedIssuer) {
    throw new MetadataError('issuer mismatch', { expected: expectedIssuer, actual: doc.issuer });
  }
  const out: AuthorizationServerMetadata = { issuer: expectedIssuer };
  for (const key of ['jwks_uri', 'introspection_endpoint'] as const) {
    const value = doc[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !URL.canParse(value)) {
      throw new MetadataError(`${key} is not a URL`);
    }
    out[key] = value;
  }
  // only third-party token exchanges use it: a bad one fails those (thirdPartyToken), not token checks
  if (typeof doc.token_endpoint === 'string' && URL.canParse(doc.token_endpoint)) out.token_endpoint = doc.token_endpoint;
  return out;
}

/** Reads a JSON body up to `maxBytes`. */
export async function readJsonResponse(response: Response, maxBytes: number): Promise<unknown> {
  const length = Number(response.headers.get('content-length') ?? '0');
  if (length > maxBytes) throw new MetadataError('response too large');
  const text = await response.text();
  if (Buffer.byteLength(text) > maxBytes) throw new MetadataError('response too large');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new MetadataError('response is not JSON');
  }
}

export interface FetchOptions {
  fetch: typeof fetch;
  timeoutMs: number;
}

/**
 * Fetches and validates the issuer's metadata, trying each discovery URL in order.
 * @throws {MetadataError} when no URL yields a valid document.
 */
export async function discoverAuthorizationServer(issuer: string, options: FetchOptions): Promise<AuthorizationServerMetadata> {
  const failures: Record<string, unknown>[] = [];
  for (const url of authorizationServerMetadataUrls(issuer)) {
    try {
      const response = await options.fetch(url, {
        headers: { accept: 'application/json' },
        redirect: 'manual',
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        failures.push({ url: url.href, status: response.status });
        continue;
      }
      return processMetadata(issuer, await readJsonResponse(response, 256 * 1024));
    } catch (err) {
      failures.push({
        url: url.href,
        error: err instanceof Error ? err.message : String(err),
        ...(err instanceof MetadataError ? err.detail : {}),
      });
    }
  }
  throw new MetadataError('authorization server metadata unavailable', { issuer, failures });
}
