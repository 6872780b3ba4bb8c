import { ResourceServerError } from './errors.js';

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token; the scheme is case-insensitive
// (RFC 9110 §11.1). Anything else in a present header is a malformed request.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
const SCHEME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?: |$)/;

/** Largest token we spend work on; real access tokens are a few KiB at most. */
export const MAX_TOKEN_LENGTH = 8192;

export interface BearerSources {
  /** The raw `Authorization` header value, if any. */
  authorization: string | undefined;
  /** The request target (path + query), checked for an `access_token` query parameter. */
  url?: string;
  /** `true` when a form-encoded body carried `access_token` (RFC 6750 §2.2, refused here). */
  tokenInBody?: boolean;
}

/**
 * Returns the bearer token from the `Authorization` header — the only method MCP allows
 * (spec §Access Token Usage; RFC 6750 §2.1).
 * @throws {ResourceServerError} `token_in_query` / `token_in_body` (400 `invalid_request`) when a
 *   token is offered any other way, `malformed_authorization_header` /
 *   `unsupported_authorization_scheme` (400) for a bad header, `missing_credentials` (401) otherwise.
 */
export function extractBearerToken(sources: BearerSources): string {
  refuseTokenOutsideHeader(sources);
  const header = sources.authorization;
  if (header === undefined) throw new ResourceServerError('missing_credentials');
  const match = BEARER.exec(header);
  if (match === null) {
    const scheme = SCHEME.exec(header)?.[0]?.trim().toLowerCase();
    throw new ResourceServerError(
      scheme !== undefined && scheme !== 'bearer' ? 'unsupported_authorization_scheme' : 'malformed_authorization_header',
      { detail: { scheme } },
    );
  }
  const token = match[1]!;
  if (token.length > MAX_TOKEN_LENGTH) {
    throw new ResourceServerError('token_too_large', { detail: { length: token.length } });
  }
  return token;
}

/**
 * RFC 6750 §2.2/§2.3 are not allowed by MCP: a token in the query or in a form body is refused,
 * checked before the header, whatever its scheme.
 * @throws {ResourceServerError} `token_in_query` / `token_in_body` (400 `invalid_request`)
 */
export function refuseTokenOutsideHeader(sources: BearerSources): void {
  if (sources.url !== undefined && hasQueryToken(sources.url)) {
    throw new ResourceServerError('token_in_query');
  }
  if (sources.tokenInBody === true) throw new ResourceServerError('token_in_body');
}

function hasQueryToken(url: string): boolean {
  const q = url.indexOf('?');
  if (q === -1) return false;
  const hash = url.indexOf('#', q);
  return new URLSearchParams(url.slice(q + 1, hash === -1 ? undefined : hash)).has('access_token');
}
