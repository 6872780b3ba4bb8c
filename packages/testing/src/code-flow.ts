/**
 * The authorization code flow with PKCE, driven over HTTP like a browser would: /authorize,
 * the AS's login and consent pages (auto-approved or submitted as forms), the redirect back
 * with `code`, `state` and `iss` (RFC 9207), then the token request.
 */
import { parseForm } from '@mcp-auth-kit/protocol';
import { HeadlessBrowser, type BrowserPage, type FollowResult } from './headless-browser.js';
import { createPkcePair, randomState } from './pkce.js';

export interface AsEndpoints {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
  introspection_endpoint?: string;
  registration_endpoint?: string;
  jwks_uri: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in?: number;
  scope?: string;
  refresh_token?: string;
  id_token?: string;
  [member: string]: unknown;
}

export interface CodeFlowInput {
  endpoints: AsEndpoints;
  clientId: string;
  /** For confidential clients (client_secret_basic). */
  clientSecret?: string;
  redirectUri: string;
  scope: string;
  resource: string;
  /** Sent as `login_hint`: the test AS's auto-login signs this user in. */
  loginHint?: string;
  /** Credentials typed into the AS's login page when it shows one. */
  credentials?: { username: string; password: string };
  browser?: HeadlessBrowser;
  /** Extra authorization request parameters. */
  extraParams?: Record<string, string>;
  /** Wraps the token request (e.g. to serialise it with other issuances). */
  wrapTokenRequest?: (send: () => Promise<TokenResponse>) => Promise<TokenResponse>;
}

export class AuthorizationFlowError extends Error {
  constructor(
    message: string,
    readonly error?: string,
  ) {
    super(message);
    this.name = 'AuthorizationFlowError';
  }
}

export async function fetchAsEndpoints(issuer: string): Promise<AsEndpoints> {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname;
  const res = await fetch(`${url.origin}/.well-known/oauth-authorization-server${path}`);
  if (!res.ok) throw new Error(`authorization server metadata: HTTP ${res.status}`);
  const metadata = (await res.json()) as AsEndpoints;
  if (metadata.issuer !== issuer) throw new Error(`authorization server metadata: issuer ${metadata.issuer} ≠ ${issuer}`);
  return metadata;
}

function pageError(page: BrowserPage): AuthorizationFlowError {
  const code = /<code>([^<]+)<\/code>/.exec(page.body)?.[1];
  const path = new URL(page.url).pathname;
  return new AuthorizationFlowError(`authorization flow stopped at ${path} (HTTP ${page.status})${code ? `: ${code}` : ''}`, code);
}

/** Answers the AS's pages: the login form with `credentials`, then the consent form with "approve". */
async function drive(browser: HeadlessBrowser, first: FollowResult, input: CodeFlowInput): Promise<URL> {
  let step = first;
  for (let pages = 0; pages < 4; pages++) {
    if (step.kind === 'redirect') return step.url;
    const { page } = step;
    const form = page.status === 200 || page.status === 401 ? parseForm(page.body) : undefined;
    if (!form) throw pageError(page);
    if (form.fieldNames.includes('password')) {
      if (page.status === 401) throw new AuthorizationFlowError('authorization flow: the AS refused the login', 'login_failed');
      if (!input.credentials) {
        throw new AuthorizationFlowError(
          'authorization flow: the AS asks for a login and no password is known for this user',
          'login_required',
        );
      }
      step = await browser.submit(page, { ...input.credentials, action: 'login' }, input.redirectUri);
    } else {
      step = await browser.submit(page, { action: 'approve' }, input.redirectUri);
    }
  }
  throw new AuthorizationFlowError('authorization flow: too many pages');
}

/** Runs the whole flow and returns the token endpoint's response. */
export async function runCodeFlow(input: CodeFlowInput): Promise<TokenResponse> {
  const browser = input.browser ?? new HeadlessBrowser();
  const { verifier, challenge } = createPkcePair();
  const state = randomState();
  const url = new URL(input.endpoints.authorization_endpoint);
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: input.clientId,
    redirect_uri: input.redirectUri,
    scope: input.scope,
    resource: input.resource,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...(input.loginHint !== undefined && { login_hint: input.loginHint }),
    ...input.extraParams,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);

  const callback = await drive(browser, await browser.follow(url.href, input.redirectUri), input);
  const error = callback.searchParams.get('error');
  if (error) throw new AuthorizationFlowError(`authorization response: ${error}`, error);
  if (callback.searchParams.get('state') !== state) throw new AuthorizationFlowError('authorization response: state mismatch');
  // RFC 9207 §2.4: the AS identifies itself in the response.
  if (callback.searchParams.get('iss') !== input.endpoints.issuer) {
    throw new AuthorizationFlowError('authorization response: iss does not match the issuer (RFC 9207)');
  }
  const code = callback.searchParams.get('code');
  if (!code) throw new AuthorizationFlowError('authorization response: no code');

  const send = () =>
    tokenRequest(input.endpoints, input, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: input.redirectUri,
      code_verifier: verifier,
      resource: input.resource,
    });
  return input.wrapTokenRequest ? input.wrapTokenRequest(send) : send();
}

export async function tokenRequest(
  endpoints: AsEndpoints,
  client: { clientId: string; clientSecret?: string },
  params: Record<string, string>,
): Promise<TokenResponse> {
  const res = await postForm(endpoints.token_endpoint, client, params);
  const body = (await res.json().catch(() => ({}))) as TokenResponse & { error?: string };
  if (!res.ok || typeof body.access_token !== 'string') {
    throw new AuthorizationFlowError(`token endpoint: HTTP ${res.status} ${body.error ?? ''}`.trim(), body.error);
  }
  return body;
}

/** POSTs a form with client authentication: Basic for confidential clients, `client_id` otherwise. */
export function postForm(
  endpoint: string,
  client: { clientId: string; clientSecret?: string },
  params: Record<string, string>,
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  const body = new URLSearchParams(params);
  if (client.clientSecret !== undefined) {
    // RFC 6749 §2.3.1: form-encode id and secret before Base64.
    const id = encodeURIComponent(client.clientId);
    const secret = encodeURIComponent(client.clientSecret);
    headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  } else {
    body.set('client_id', client.clientId);
  }
  return fetch(endpoint, { method: 'POST', headers, body });
}
