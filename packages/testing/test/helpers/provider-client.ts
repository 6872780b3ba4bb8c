/**
 * The OAuth client side of the third-party provider's tests: an authorization request driven
 * through its pages by the kit's headless browser, and token-endpoint calls with either client
 * authentication method. Every step is real HTTP on loopback.
 */
import { createPkcePair, HeadlessBrowser, type BrowserPage, type FollowResult, type ThirdPartyProvider } from '@mcp-auth-kit/testing';
import { parseForm } from '@mcp-auth-kit/protocol';

export interface ClientUnderTest {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

/** Registers `clientId` with the one redirect URI `redirectUri` (and a `name` or a given secret) at `provider`. */
export function registerClientUnderTest(
  provider: ThirdPartyProvider,
  clientId: string,
  redirectUri: string,
  more: { name?: string; clientSecret?: string } = {},
): ClientUnderTest {
  const { clientSecret } = provider.registerClient({ clientId, ...more, redirectUris: [redirectUri] });
  return { clientId, clientSecret, redirectUri };
}

export interface AuthorizationAttempt {
  browser: HeadlessBrowser;
  verifier: string;
  state: string;
  /** The first answer of the authorization endpoint (a page, or a redirect to the client). */
  first: FollowResult;
}

/** `GET /authorize` with PKCE S256 and a state; `params` overrides or (with `undefined`) removes parameters. */
export async function startAuthorization(
  provider: ThirdPartyProvider,
  client: ClientUnderTest,
  params: Record<string, string | undefined> = {},
  browser = new HeadlessBrowser(),
): Promise<AuthorizationAttempt> {
  const { verifier, challenge } = createPkcePair();
  const state = `state-${Math.random().toString(36).slice(2)}`;
  const url = new URL(provider.metadata.authorization_endpoint as string);
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope: 'files.read',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  };
  for (const [name, value] of Object.entries(all)) if (value !== undefined) url.searchParams.set(name, value);
  return { browser, verifier, state, first: await browser.follow(url.href, client.redirectUri) };
}

export function page(step: FollowResult): BrowserPage {
  if (step.kind !== 'page') throw new Error(`expected a page, got a redirect to ${step.url.href}`);
  return step.page;
}

export function redirect(step: FollowResult): URL {
  if (step.kind !== 'redirect') throw new Error(`expected a redirect, got HTTP ${step.page.status}: ${step.page.body.slice(0, 300)}`);
  return step.url;
}

/** Signs in on the sign-in page and approves (or denies) on the consent page; returns the redirect to the client. */
export async function signInAndDecide(
  attempt: AuthorizationAttempt,
  client: ClientUnderTest,
  user: { username: string; password: string },
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const consent = page(await attempt.browser.submit(page(attempt.first), { ...user, action: 'signin' }, client.redirectUri));
  return redirect(await attempt.browser.submit(consent, { action: decision }, client.redirectUri));
}

/** The whole authorization: the code and the verifier that goes with it. */
export async function authorizationCode(
  provider: ThirdPartyProvider,
  client: ClientUnderTest,
  username: string,
  params: Record<string, string | undefined> = {},
): Promise<{ code: string; verifier: string }> {
  const attempt = await startAuthorization(provider, client, params);
  const callback = await signInAndDecide(attempt, client, { username, password: provider.passwordOf(username)! });
  return { code: callback.searchParams.get('code')!, verifier: attempt.verifier };
}

export type ClientAuth = 'basic' | 'post' | 'both' | 'none' | { secret: string };

/** POST to a provider endpoint with client authentication. */
export async function postAs(
  endpoint: string,
  client: ClientUnderTest,
  params: Record<string, string>,
  auth: ClientAuth = 'basic',
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const body = new URLSearchParams(params);
  const secret = typeof auth === 'object' ? auth.secret : client.clientSecret;
  if (auth === 'basic' || auth === 'both' || typeof auth === 'object') {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  }
  if (auth === 'post' || auth === 'both') {
    body.set('client_id', client.clientId);
    body.set('client_secret', secret);
  }
  const res = await fetch(endpoint, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The CSRF-protected form of a page, for posting it by hand. */
export function formOf(body: string) {
  const form = parseForm(body);
  if (!form) throw new Error('no form on the page');
  return form;
}

/** The token request for an authorization code (with its verifier and the client's redirect URI) as `as` (default: the client itself). */
export function redeemCode(provider: ThirdPartyProvider, client: ClientUnderTest, grant: { code: string; verifier: string }, as = client) {
  return postAs(provider.metadata.token_endpoint as string, as, {
    grant_type: 'authorization_code',
    code: grant.code,
    code_verifier: grant.verifier,
    redirect_uri: client.redirectUri,
  });
}
