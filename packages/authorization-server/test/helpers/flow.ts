import { authorizeUrl, REDIRECT, RESOURCE, tokenRequest } from './as.js';
import { type BrowserPage, HeadlessBrowser, isUrl, pkcePair } from '@mcp-auth-kit/test-utils';

export interface CodeFlowResult {
  callback: URL;
  verifier: string;
  state: string;
}

/** Parameters of an authorization request; the PKCE pair and `response_type` are added. */
export type AuthorizationParams = { client_id: string } & Record<string, string | undefined>;

/**
 * The /auth URL of a code request with PKCE S256 over `challenge`; defaults: our redirect URI,
 * `notes:read`, our resource (RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 8707 §2). `params` override them.
 */
export function codeAuthorizeUrl(issuer: string, challenge: string, params: AuthorizationParams): string {
  return authorizeUrl(issuer, {
    response_type: 'code',
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'notes:read',
    resource: RESOURCE,
    ...params,
  });
}

/**
 * Starts an authorization request in `ua` with a fresh PKCE S256 pair (defaults: our redirect
 * URI, `notes:read`, our resource, a random state) and follows it to the first page it stops
 * at or to the redirect URI.
 */
export async function openAuthorization(
  issuer: string,
  params: AuthorizationParams,
  ua = new HeadlessBrowser(),
): Promise<{ page: URL | BrowserPage; verifier: string; state: string; ua: HeadlessBrowser }> {
  const { verifier, challenge } = pkcePair();
  const state = params.state ?? Math.random().toString(36).slice(2);
  const redirectUri = params.redirect_uri ?? REDIRECT;
  const page = await ua.follow(codeAuthorizeUrl(issuer, challenge, { ...params, state }), redirectUri);
  return { page, verifier, state, ua };
}

/** Runs /auth with PKCE until the redirect URI (dev auto-login must be on). */
export async function authorizeAuto(
  issuer: string,
  clientId: string,
  extra: Record<string, string | undefined> = {},
  ua = new HeadlessBrowser(),
): Promise<CodeFlowResult> {
  const { page, verifier, state } = await openAuthorization(issuer, { client_id: clientId, ...extra }, ua);
  if (!isUrl(page)) throw new Error(`flow stopped at ${page.url} (${page.status}): ${page.body.slice(0, 300)}`);
  return { callback: page, verifier, state };
}

/** Drops the parameters set to undefined (how callers leave a default out). */
function defined(params: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * The token request parameters that redeem the code of `flow` (RFC 6749 §4.1.3, RFC 7636 §4.5);
 * `extra` overrides them (`client_id: undefined` for a client that authenticates in a header).
 */
export function codeGrant(
  clientId: string,
  flow: Pick<CodeFlowResult, 'callback' | 'verifier'>,
  extra: Record<string, string | undefined> = {},
): Record<string, string> {
  return defined({
    grant_type: 'authorization_code',
    code: flow.callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT,
    code_verifier: flow.verifier,
    client_id: clientId,
    resource: RESOURCE,
    ...extra,
  });
}

export async function exchangeCode(
  issuer: string,
  clientId: string,
  flow: Pick<CodeFlowResult, 'callback' | 'verifier'>,
  extra: Record<string, string | undefined> = {},
) {
  return tokenRequest(issuer, codeGrant(clientId, flow, extra));
}

/**
 * A refresh token grant (RFC 6749 §6) for a public client, for our resource (RFC 8707 §2) unless
 * `extra` says otherwise (`resource: undefined` leaves it out).
 */
export async function refreshWith(
  issuer: string,
  clientId: string,
  refreshToken: string,
  extra: Record<string, string | undefined> = {},
  headers: Record<string, string> = {},
) {
  const params = { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, resource: RESOURCE, ...extra };
  return tokenRequest(issuer, defined(params), headers);
}

/**
 * Posts `fields` to the form of `page` exactly as given: no CSRF token is added, so a test can
 * send none, a forged one or another browser's.
 */
export function postFormAsIs(ua: HeadlessBrowser, page: BrowserPage, fields: Record<string, string>) {
  const action = new URL(/action="([^"]+)"/.exec(page.body)![1]!, page.url).href;
  return ua.request(action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
}
