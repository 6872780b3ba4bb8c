import { randomUUID } from 'node:crypto';
import { displaySafeText, isAccessTokenSyntax, isLoopbackHost, oauthErrorCode, tokenLifetime } from '@mcp-auth-kit/protocol';
import { MetadataError, readJsonResponse } from '../as-metadata.js';
import { authenticateClient, type ClientSecretCredentials } from '../client-auth.js';
import { ThirdPartyAuthorizationRequiredError, ThirdPartyTokenError } from './errors.js';

/** RFC 8693 §2.1 `grant_type`. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 8693 §3: the subject token is an OAuth access token (the MCP token), and so is the issued one. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** Largest answer read from the token endpoint. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Longest provider token accepted (it travels in an `Authorization` header). */
const MAX_PROVIDER_TOKEN_LENGTH = 16 * 1024;
/** Longest connect URL accepted (browsers and servers commonly cap URLs near 2 KiB). */
const MAX_CONNECT_URI_LENGTH = 2048;
/** Longest provider display name shown in the elicitation message. */
const MAX_DISPLAY_NAME_LENGTH = 64;

/** A provider token the authorization server issued by token exchange. */
export interface ExchangedToken {
  accessToken: string;
  /** Seconds, when the answer said (`expires_in`). */
  expiresIn: number | undefined;
}

export interface ExchangeRequest {
  tokenEndpoint: string;
  /** The issuer the token endpoint belongs to: a connect URL must be on its origin. */
  issuer: string;
  credentials: ClientSecretCredentials;
  /** The MCP access token (RFC 8693 `subject_token`). */
  subjectToken: string;
  /** The provider's short name (RFC 8693 `audience`). */
  provider: string;
  fetch: typeof fetch;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** Why a token endpoint URL is not used (it receives the MCP token and the client secret), or undefined. */
export function tokenEndpointProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !URL.canParse(value)) return 'is not a URL';
  const url = new URL(value);
  if (url.username !== '' || url.password !== '') return 'has user information';
  if (url.hash !== '') return 'has a fragment';
  // MCP §Communication Security: authorization server endpoints MUST be served over HTTPS
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) return 'is not https (or http on loopback)';
  return undefined;
}

/**
 * The connect URL of an `interaction_required` answer, or undefined when it is not one to show a
 * user: it must be an https (loopback: http) URL on the authorization server's own origin, where
 * the contract puts the connect pages (`<issuer>/connect/<ticket>`). Anything else would have the
 * MCP client open a page the authorization server does not serve.
 */
export function connectUri(value: unknown, issuer: string): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_CONNECT_URI_LENGTH || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.origin !== new URL(issuer).origin || url.username !== '' || url.password !== '' || url.hash !== '') return undefined;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) return undefined;
  return url.href;
}

/** The message each refusal gets: fixed text and the provider's validated short name, nothing the server chose. */
function refusalMessage(code: string, provider: string): string {
  const name = JSON.stringify(provider);
  switch (code) {
    case 'invalid_client':
      return `The authorization server refused this MCP server's client credentials (token exchange for ${name})`;
    case 'unauthorized_client':
      return `This MCP server may not use token exchange at its authorization server (provider ${name})`;
    case 'invalid_grant':
      return `The authorization server refused the MCP access token for a ${name} token (expired, revoked, or issued for another resource)`;
    case 'invalid_target':
      return `${name} is not a provider this MCP server may use`;
    case 'temporarily_unavailable':
      return `The authorization server could not be reached for a ${name} token; try again later`;
    case 'invalid_response':
      return `The authorization server's answer to the token exchange for ${name} was not usable`;
    default:
      return `Token exchange for ${name} failed (${code})`;
  }
}

/** A {@link ThirdPartyTokenError} for `code` with its fixed message. */
export function refusal(code: string, provider: string, options: { status?: number; cause?: unknown } = {}): ThirdPartyTokenError {
  return new ThirdPartyTokenError(code, provider, refusalMessage(code, provider), options);
}

/**
 * Checks the token endpoint's answer to an exchange (RFC 8693 §2.2): 200 with a Bearer access
 * token, or 400 `interaction_required` with a connect URL (the contract's extension members), or
 * another OAuth error. Pure: any answer can be tested without a server.
 * @throws {ThirdPartyAuthorizationRequiredError} the user must connect the provider first
 * @throws {ThirdPartyTokenError} any other outcome
 */
export function processExchangeResponse(status: number, body: unknown, expected: { issuer: string; provider: string }): ExchangedToken {
  const { provider } = expected;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw refusal('invalid_response', provider, { status });
  const doc = body as Record<string, unknown>;
  if (status !== 200) {
    if (status >= 500) throw refusal('temporarily_unavailable', provider, { status });
    const code = oauthErrorCode(doc.error);
    if (code !== 'interaction_required') throw refusal(code, provider, { status });
    const url = connectUri(doc.connect_uri, expected.issuer);
    // the answer must be about the provider asked for, and name a page to send the user to
    if (url === undefined || (doc.provider !== undefined && doc.provider !== provider))
      throw refusal('invalid_response', provider, { status });
    throw new ThirdPartyAuthorizationRequiredError({
      provider,
      providerDisplayName: displaySafeText(doc.provider_display_name, MAX_DISPLAY_NAME_LENGTH) ?? provider,
      url,
      expiresIn: tokenLifetime(doc.connect_expires_in),
      elicitationId: randomUUID(),
      status,
    });
  }
  const token = doc.access_token;
  const usable =
    isAccessTokenSyntax(token) &&
    token.length <= MAX_PROVIDER_TOKEN_LENGTH &&
    typeof doc.token_type === 'string' &&
    doc.token_type.toLowerCase() === 'bearer' &&
    // RFC 8693 §2.2.1: issued_token_type is REQUIRED; an access token is what was asked for
    (doc.issued_token_type === undefined || doc.issued_token_type === ACCESS_TOKEN_TYPE);
  if (!usable) throw refusal('invalid_response', provider, { status });
  return { accessToken: token, expiresIn: tokenLifetime(doc.expires_in) };
}

/**
 * One RFC 8693 token exchange at the authorization server's token endpoint, authenticated as
 * this MCP server's confidential client. The MCP access token is sent here and nowhere else;
 * redirects are not followed (they would carry it to another URL).
 */
export async function exchangeToken(request: ExchangeRequest): Promise<ExchangedToken> {
  const { provider } = request;
  const form = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: request.subjectToken,
    subject_token_type: ACCESS_TOKEN_TYPE,
    audience: provider,
  });
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/x-www-form-urlencoded',
  };
  authenticateClient(request.credentials, form, headers);
  const timeout = AbortSignal.timeout(request.timeoutMs);
  let response: Response;
  try {
    response = await request.fetch(request.tokenEndpoint, {
      method: 'POST',
      headers,
      body: form.toString(),
      redirect: 'manual',
      signal: request.signal === undefined ? timeout : AbortSignal.any([timeout, request.signal]),
    });
  } catch (cause) {
    throw unreachable(request, cause);
  }
  const { status } = response;
  if (!(response.headers.get('content-type') ?? '').toLowerCase().includes('json')) {
    await response.body?.cancel().catch(() => undefined);
    throw refusal(status >= 500 ? 'temporarily_unavailable' : 'invalid_response', provider, { status });
  }
  let body: unknown;
  try {
    body = await readJsonResponse(response, MAX_RESPONSE_BYTES);
  } catch (cause) {
    // too large, or not JSON after all
    if (cause instanceof MetadataError) throw refusal('invalid_response', provider, { status });
    throw unreachable(request, cause);
  }
  return processExchangeResponse(status, body, { issuer: request.issuer, provider });
}

/** A request that got no (complete) answer: the caller's own cancellation as it came, else `temporarily_unavailable`. */
function unreachable(request: ExchangeRequest, cause: unknown): unknown {
  if (request.signal?.aborted === true) return request.signal.reason;
  // a network error or timeout: only its message is kept (it names the URL at most, never the form)
  return refusal('temporarily_unavailable', request.provider, { cause: cause instanceof Error ? new Error(cause.message) : undefined });
}
