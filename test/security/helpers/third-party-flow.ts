/**
 * Driving the token vault over HTTP, as an MCP server and a user's browser would: an MCP access
 * token for a user (code flow with the login page), the RFC 8693 exchange of the MCP server, and
 * the connect pages up to the provider's consent (the fake provider of third-party-provider.ts).
 */
import { HeadlessBrowser, isUrl, pkcePair, type BrowserPage } from '@mcp-auth-kit/test-utils';
import { PROVIDER_CLIENT_ID, startFakeProvider, type FakeProvider } from './third-party-provider.js';
import { sharedForSuite } from '../../helpers/suite.js';
import { loginPageUrl, postForm, type AttackStackOptions, type JsonResponse } from './support.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const NATIVE_REDIRECT = 'http://127.0.0.1/callback';

/** An answer of the token endpoint (support.ts's JSON answer). */
export type ExchangeAnswer = JsonResponse;

/** The thirdParty configuration for one fake provider named `drive`, usable by `resources`. */
export function driveProvider(provider: FakeProvider, resources: string[], extra: Record<string, unknown> = {}) {
  return {
    issuer: provider.issuer,
    clientId: PROVIDER_CLIENT_ID,
    clientSecret: 'provider-client-secret-0123456789',
    scopes: ['files.read'],
    resources,
    displayName: 'Drive',
    ...extra,
  };
}

/** Configured client metadata (with our `resource`). */
export type ConfiguredClient = { client_id: string; [key: string]: unknown };

/** A confidential client that is the MCP server `resource` (it may exchange tokens). */
export function mcpServerClient(clientId: string, secret: string, resource: string): ConfiguredClient {
  return {
    client_id: clientId,
    client_secret: secret,
    grant_types: [TOKEN_EXCHANGE],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    resource,
  };
}

/** The first page a flow stops at, which must be a page (not a redirect out). */
function pageOf(end: URL | BrowserPage, what: string): BrowserPage {
  if (isUrl(end)) throw new Error(`${what}: stopped at a redirect to ${end.origin}${end.pathname}`);
  return end;
}

/**
 * An MCP access token for `username` (signed in on the login page of `issuer` in `ua`): a public
 * client registered by DCR, PKCE, the resource. The browser session stays in `ua`.
 */
export async function mcpAccessToken(
  issuer: string,
  user: { username: string; password: string },
  resource: string,
  ua = new HeadlessBrowser(),
): Promise<{ accessToken: string; ua: HeadlessBrowser; clientId: string }> {
  const reg = await fetch(`${issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'vault test client',
      redirect_uris: [NATIVE_REDIRECT],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
  const clientId = ((await reg.json()) as { client_id: string }).client_id;
  const { verifier, challenge } = pkcePair();
  const auth = loginPageUrl(issuer, clientId, { resource, code_challenge: challenge, prompt: 'login' });
  const stop = (url: URL) => url.href.startsWith(NATIVE_REDIRECT);
  let end = await ua.follow(auth, stop);
  if (!isUrl(end) && /name="password"/.test(end.body))
    end = await ua.submit(end, { username: user.username, password: user.password, action: 'login' }, stop);
  if (!isUrl(end) && /value="approve"/.test(end.body)) end = await ua.submit(end, { action: 'approve' }, stop);
  if (!isUrl(end)) throw new Error(`sign-in stopped at ${end.url} (${end.status}): ${end.body.slice(0, 300)}`);
  const code = end.searchParams.get('code');
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: String(code),
      redirect_uri: NATIVE_REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource,
    }),
  });
  const tokens = (await res.json()) as { access_token?: string };
  if (!tokens.access_token) throw new Error(`no access token: ${JSON.stringify(tokens)}`);
  return { accessToken: tokens.access_token, ua, clientId };
}

/** The MCP server's RFC 8693 request (client_secret_basic unless `params` / `headers` say otherwise). */
export async function exchange(
  issuer: string,
  client: { id: string; secret: string },
  subjectToken: string,
  audience = 'drive',
  params: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<ExchangeAnswer> {
  return postForm(
    `${issuer}/token`,
    { grant_type: TOKEN_EXCHANGE, subject_token: subjectToken, subject_token_type: ACCESS_TOKEN_TYPE, audience, ...params },
    {
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`,
      ...headers,
    },
  );
}

/**
 * Opens a connect URL in `ua` and goes as far as it leads: signs in on our login page when asked
 * (with `asUser`), confirms, and at the provider signs in as `providerUser` and allows. Returns the
 * last page (the AS's "connected" page when everything worked).
 */
export async function completeConnect(
  connectUri: string,
  ua: HeadlessBrowser,
  options: {
    asUser?: { username: string; password: string };
    providerUser: { username: string; password: string };
    provider: FakeProvider;
  },
): Promise<BrowserPage> {
  const issuerOrigin = new URL(connectUri).origin;
  let page = pageOf(await ua.follow(connectUri, () => false), 'connect page');
  if (/name="password"/.test(page.body) && new URL(page.url).origin === issuerOrigin) {
    if (!options.asUser) return page;
    page = pageOf(await ua.submit(page, { ...options.asUser, action: 'login' }, () => false), 'after sign-in');
  }
  if (!/value="connect"/.test(page.body)) return page;
  page = pageOf(await ua.submit(page, { action: 'connect' }, () => false), 'after confirmation');
  if (new URL(page.url).origin !== new URL(options.provider.issuer).origin) return page;
  return pageOf(await ua.submit(page, { ...options.providerUser, decision: 'allow' }, () => false), 'after the provider');
}

/** The MCP server of the vault attack stacks: an extra resource of the stack, and its client. */
export const VAULT_MCP = 'https://vault-mcp.example/mcp';
export const VAULT_CLIENT = { id: 'vault-mcp', secret: 'vault-mcp-secret-0123456789' };

/** What an attack stack needs for the vault: the extra resource, the MCP server client, the provider. */
export function vaultStackOptions(provider: FakeProvider) {
  return {
    extraResources: [VAULT_MCP],
    clients: [mcpServerClient(VAULT_CLIENT.id, VAULT_CLIENT.secret, VAULT_MCP)],
    thirdParty: { providers: { drive: driveProvider(provider, [VAULT_MCP]) } },
  };
}

/** `options` of an attack stack with the vault added: its resource, its MCP server client and the provider. */
export function withVault(provider: FakeProvider, options: AttackStackOptions): AttackStackOptions {
  const vault = vaultStackOptions(provider);
  const { authorizationServer } = options;
  return {
    ...options,
    extraResources: [...(options.extraResources ?? []), ...vault.extraResources],
    authorizationServer: {
      ...authorizationServer,
      clients: [...(authorizationServer?.clients ?? []), ...vault.clients],
      thirdParty: vault.thirdParty,
    },
  };
}

/** The demo account's drive (`demo-drive`, holding `files`) at a fake provider, for a describe block's tests. */
export function useDemoDrive(files: string[]): FakeProvider {
  return sharedForSuite(() => startFakeProvider([{ username: 'demo-drive', password: 'drive-pass', files }]));
}

/** A second MCP server and its client, for the provider only it may use (`calendar`). */
export const OTHER_MCP = 'https://other-mcp.example/mcp';
export const OTHER_CLIENT = { id: 'other-mcp', secret: 'other-mcp-secret-0123456789' };

export const ALICE = { username: 'alice', password: 'alice-password' };
export const MALLORY = { username: 'mallory', password: 'mallory-password' };
export const ALICE_DRIVE = { username: 'alice-drive', password: 'alice-drive-pass' };
export const MALLORY_DRIVE = { username: 'mallory-drive', password: 'mallory-drive-pass' };

/**
 * The attack stacks' options for two users who sign in with passwords (no auto-login): the vault's
 * MCP server may use `drive`, the other MCP server only `calendar` (the same fake provider).
 */
export function twoUserVaultOptions(provider: FakeProvider) {
  return {
    devAutoLogin: undefined,
    extraResources: [VAULT_MCP, OTHER_MCP],
    authorizationServer: {
      users: [ALICE, MALLORY],
      clients: [
        mcpServerClient(VAULT_CLIENT.id, VAULT_CLIENT.secret, VAULT_MCP),
        mcpServerClient(OTHER_CLIENT.id, OTHER_CLIENT.secret, OTHER_MCP),
      ],
      thirdParty: {
        providers: {
          drive: driveProvider(provider, [VAULT_MCP]),
          calendar: driveProvider(provider, [OTHER_MCP], { displayName: 'Calendar' }),
        },
      },
    },
  };
}

/**
 * The connect flow in a browser already signed in as the ticket's user, up to the provider's
 * redirect back: the callback URL (code, state, iss) is returned without being requested.
 */
export async function connectUntilCallback(
  connectUri: string,
  ua: HeadlessBrowser,
  options: { providerUser: { username: string; password: string } },
): Promise<URL> {
  const confirm = pageOf(await ua.follow(connectUri, () => false), 'connect page');
  if (!/value="connect"/.test(confirm.body))
    throw new Error(`no confirmation at ${confirm.url} (${confirm.status}): ${confirm.body.slice(0, 300)}`);
  const atProvider = pageOf(await ua.submit(confirm, { action: 'connect' }, () => false), 'provider page');
  const end = await ua.submit(atProvider, { ...options.providerUser, decision: 'allow' }, (url) => url.pathname === '/connect/callback');
  if (!isUrl(end)) throw new Error(`the provider did not redirect back: ${end.status} ${end.body.slice(0, 300)}`);
  return end;
}

/** The connection rows of an account (what the vault holds for it). */
export async function connectionsOf(
  store: {
    accounts: { findByUsername(u: string): Promise<{ id: string } | undefined> };
    connections: { list(id: string): Promise<{ provider: string }[]> };
  },
  username: string,
) {
  const account = await store.accounts.findByUsername(username);
  return account ? (await store.connections.list(account.id)).map((c) => c.provider) : [];
}
