/**
 * The provider's authorization request check (RFC 6749 §4.1.1 and §4.1.2.1, RFC 7636 §4.4.1),
 * and its authorization response (RFC 6749 §4.1.2, RFC 9207). While the client or its
 * redirect URI is not established the user gets an error page and nothing is redirected
 * (§4.1.2.1: no open redirector); every later error goes back to the client with `state`.
 */
import { isScopeToken, splitScope } from '@mcp-auth-kit/protocol';
import type { ResponseIssBehaviour, ThirdPartyClient } from './provider-options.js';

export interface AuthorizationRequest {
  client: ThirdPartyClient;
  redirectUri: string;
  /** RFC 6749 §4.1.3: the token request must then repeat it. */
  redirectUriSent: boolean;
  scopes: string[];
  state?: string;
  codeChallenge: string;
}

export type AuthorizationRequestCheck =
  | { kind: 'ok'; request: AuthorizationRequest }
  /** Shown to the user, never redirected. */
  | { kind: 'page'; message: string }
  | { kind: 'redirect'; redirectUri: string; error: string; description: string; state?: string };

/** RFC 7636 §4.2: BASE64URL(SHA-256(verifier)) is always 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function checkAuthorizationRequest(
  query: URLSearchParams,
  findClient: (clientId: string) => ThirdPartyClient | undefined,
  scopesSupported: readonly string[],
): AuthorizationRequestCheck {
  // §3.1: "Request and response parameters MUST NOT be included more than once."
  const repeated = [...new Set([...query.keys()])].filter((name) => query.getAll(name).length > 1);
  if (repeated.includes('client_id') || repeated.includes('redirect_uri')) {
    return { kind: 'page', message: 'The request names its client or redirect URI more than once.' };
  }
  const clientId = query.get('client_id');
  const client = clientId === null ? undefined : findClient(clientId);
  if (!client) return { kind: 'page', message: 'The application that sent you here is not registered with this service.' };
  const sent = query.get('redirect_uri');
  // Exact string comparison (RFC 6749 §3.1.2.2 as OAuth 2.1 §2.3.1 requires); without one, the only registered URI.
  const redirectUri = sent === null ? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined) : sent;
  if (redirectUri === undefined || !client.redirectUris.includes(redirectUri)) {
    return { kind: 'page', message: 'The redirect URI of this request is not registered for the application.' };
  }

  const state = query.get('state') ?? undefined;
  const refuse = (error: string, description: string): AuthorizationRequestCheck => ({
    kind: 'redirect',
    redirectUri,
    error,
    description,
    ...(state !== undefined && !repeated.includes('state') && { state }),
  });
  if (repeated.length) return refuse('invalid_request', `repeated parameter: ${repeated.join(', ')}`);
  const responseType = query.get('response_type');
  if (responseType === null) return refuse('invalid_request', 'response_type is required');
  if (responseType !== 'code') return refuse('unsupported_response_type', 'only response_type=code');
  const challenge = query.get('code_challenge');
  if (challenge === null || query.get('code_challenge_method') !== 'S256') {
    return refuse('invalid_request', 'PKCE with code_challenge_method=S256 is required');
  }
  if (!S256_CHALLENGE.test(challenge)) return refuse('invalid_request', 'code_challenge is not an S256 challenge');
  const asked = splitScope(query.get('scope') ?? undefined);
  const unknown = asked.filter((scope) => !isScopeToken(scope) || !scopesSupported.includes(scope));
  if (unknown.length) return refuse('invalid_scope', `unknown scope: ${unknown.join(' ')}`);
  return {
    kind: 'ok',
    request: {
      client,
      redirectUri,
      redirectUriSent: sent !== null,
      // §3.3: without a scope, the provider's default (all it knows).
      scopes: asked.length ? asked : [...scopesSupported],
      ...(state !== undefined && { state }),
      codeChallenge: challenge,
    },
  };
}

/** The redirect back to the client: the registered URI (its own query kept) plus the response parameters, `state` and `iss`. */
export function authorizationResponse(
  redirectUri: string,
  params: Record<string, string>,
  state: string | undefined,
  issuer: string,
  iss: ResponseIssBehaviour,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  if (state !== undefined) url.searchParams.set('state', state);
  // RFC 9207 §2: in success and error responses alike.
  if (iss === 'send') url.searchParams.set('iss', issuer);
  else if (typeof iss === 'object') url.searchParams.set('iss', iss.wrong);
  return url.href;
}
