import { randomBytes, randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { DEMO_SCOPES, startAuthServer, type RunningAuthServer, type StartAuthServerOptions } from '@mcp-auth-kit/auth-server';
import { startDemoServer, type DemoServer } from '@mcp-auth-kit/demo-mcp-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import type { ResourceServerLogger } from '@mcp-auth-kit/resource-server';
import { CookieJar } from 'tough-cookie';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { HeadlessBrowser, freePort, isUrl, pkcePair } from '@mcp-auth-kit/test-utils';
import { sharedForSuite } from '../../helpers/suite.js';

/** OAuth error answers are asserted with test-utils' one helper (status and `error` together). */
export { expectOAuthError } from '@mcp-auth-kit/test-utils';

/**
 * The demo stack for attack tests: our AS (memory storage unless told otherwise, DEV_AUTO_LOGIN,
 * DCR rate limit off so attacks are not masked by 429s) and the demo MCP server, on loopback.
 * Everything is driven over raw HTTP so each test controls every parameter an attacker controls.
 */
export interface AttackStack {
  issuer: string;
  mcpUrl: string;
  as: RunningAuthServer;
  mcp: DemoServer;
  metadata: AsMetadata;
  close(): Promise<void>;
}

export interface AsMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint: string;
  revocation_endpoint?: string;
  introspection_endpoint?: string;
  jwks_uri: string;
  [key: string]: unknown;
}

export const NATIVE_REDIRECT = 'http://127.0.0.1/callback';

export type AttackStackOptions = Omit<StartAuthServerOptions, 'port' | 'host' | 'resource'> & {
  quiet?: boolean;
  extraResources?: string[];
  /** The demo MCP server's middleware logger (refusal reasons). */
  mcpLogger?: ResourceServerLogger;
};

export async function startAttackStack(options: AttackStackOptions = {}): Promise<AttackStack> {
  const mcpPort = await freePort();
  const resource = `http://localhost:${mcpPort}/mcp`;
  const { quiet = true, authorizationServer, extraResources, mcpLogger, ...rest } = options;
  const as = await startAuthServer({
    devAutoLogin: 'demo',
    storage: { kind: 'memory' },
    ...rest,
    port: 0,
    host: '127.0.0.1',
    resource,
    ...(quiet && { logger: silentLogger }),
    authorizationServer: {
      ...(extraResources && {
        resources: [
          { resource, scopes: DEMO_SCOPES, defaultScopes: ['notes:read'] },
          ...extraResources.map((r) => ({ resource: r, scopes: DEMO_SCOPES })),
        ],
      }),
      ...authorizationServer,
      registration: { rateLimit: false, ...authorizationServer?.registration },
    },
  });
  const mcp = await startDemoServer({
    port: mcpPort,
    host: '127.0.0.1',
    resource,
    issuer: as.issuer,
    ...(quiet ? { onError: () => {} } : {}),
    ...(mcpLogger && { logger: mcpLogger }),
  });
  const metadata = (await (await fetch(`${as.issuer}/.well-known/oauth-authorization-server`)).json()) as AsMetadata;
  return {
    issuer: as.issuer,
    mcpUrl: mcp.url,
    as,
    mcp,
    metadata,
    async close() {
      await mcp.close();
      await as.close();
    },
  };
}

/**
 * The attack stack of a describe block: started before its tests, closed after them. Options
 * given as a function are read when it starts (for values an earlier `beforeAll` made).
 */
export function useAttackStack(options: AttackStackOptions | (() => AttackStackOptions) = {}): AttackStack {
  return sharedForSuite(() => startAttackStack(typeof options === 'function' ? options() : options));
}

/** Re-exported: the attack tests take every helper from this file. */
export { pkcePair };

/** A logger that keeps the AS's audit events (fields with `audit`) in `events` and drops the rest. */
export function auditLogger(events: Array<Record<string, unknown>>) {
  return {
    debug() {},
    info(_message: string, fields?: Record<string, unknown>) {
      if (fields?.audit) events.push(fields);
    },
    warn() {},
    error() {},
  };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

async function asJson(res: Response): Promise<JsonResponse> {
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON: callers assert on status / text */
  }
  return { status: res.status, headers: res.headers, body, text };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return asJson(
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
}

export async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return asJson(
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    }),
  );
}

/** RFC 7591 §3.1 registration request: a public native client (loopback redirect, code + refresh) unless `metadata` says otherwise. */
export function postRegistration(stack: AttackStack, metadata: Record<string, unknown> = {}): Promise<JsonResponse> {
  return postJson(stack.metadata.registration_endpoint, {
    client_name: 'attack test client',
    redirect_uris: [NATIVE_REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...metadata,
  });
}

/** RFC 7591 registration of a public native client (loopback redirect, code + refresh); its client_id. */
export async function registerClient(stack: AttackStack, metadata: Record<string, unknown> = {}): Promise<string> {
  const res = await postRegistration(stack, metadata);
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
  return res.body.client_id as string;
}

export type FrontChannelResult = { kind: 'callback'; url: URL } | { kind: 'stopped'; status: number; url: URL; body: string };

/**
 * Plays the browser: follows the AS's redirects (cookie jar aware) until a URL that is not on
 * the AS — the redirect target — is reached, which is returned without being contacted; or
 * until the AS answers with a non-redirect (an error page), which is returned.
 */
export async function frontChannel(issuer: string, start: string | URL, jar = new CookieJar()): Promise<FrontChannelResult> {
  const asOrigin = new URL(issuer).origin;
  const end = await new HeadlessBrowser({ jar }).follow(start, (url) => url.origin !== asOrigin);
  return isUrl(end) ? { kind: 'callback', url: end } : { kind: 'stopped', status: end.status, url: new URL(end.url), body: end.body };
}

export interface AuthorizeInput {
  clientId: string;
  redirectUri?: string;
  resource?: string | null;
  scope?: string;
  challenge?: string | null;
  method?: string | null;
  state?: string;
  extra?: Record<string, string>;
}

export function authorizationUrl(stack: AttackStack, input: AuthorizeInput): URL {
  const url = new URL(stack.metadata.authorization_endpoint);
  const p = url.searchParams;
  p.set('response_type', 'code');
  p.set('client_id', input.clientId);
  p.set('redirect_uri', input.redirectUri ?? NATIVE_REDIRECT);
  p.set('scope', input.scope ?? 'notes:read');
  p.set('state', input.state ?? randomBytes(8).toString('hex'));
  if (input.resource !== null) p.set('resource', input.resource ?? stack.mcpUrl);
  if (input.challenge !== null && input.challenge !== undefined) p.set('code_challenge', input.challenge);
  if (input.method !== null) p.set('code_challenge_method', input.method ?? 'S256');
  for (const [k, v] of Object.entries(input.extra ?? {})) p.set(k, v);
  return url;
}

/** Front channel up to the callback; throws when the AS stops on a page instead. */
export async function authorizeCode(stack: AttackStack, input: AuthorizeInput): Promise<URLSearchParams> {
  const result = await frontChannel(stack.issuer, authorizationUrl(stack, input));
  if (result.kind !== 'callback') throw new Error(`authorization stopped with HTTP ${result.status}: ${result.body.slice(0, 300)}`);
  return result.url.searchParams;
}

/** The token request that redeems `code` (RFC 6749 §4.1.3; PKCE verifier, RFC 7636 §4.5; RFC 8707 resource) of a public client. */
export function codeGrantForm(input: {
  code: string;
  clientId: string;
  verifier: string;
  resource: string;
  redirectUri?: string;
}): Record<string, string> {
  return {
    grant_type: 'authorization_code',
    code: input.code,
    redirect_uri: input.redirectUri ?? NATIVE_REDIRECT,
    client_id: input.clientId,
    code_verifier: input.verifier,
    resource: input.resource,
  };
}

/** A complete code flow (S256) for a registered public client; returns the token response. */
export async function fullFlow(
  stack: AttackStack,
  clientId: string,
  options: { scope?: string; redirectUri?: string; resource?: string } = {},
): Promise<{ access_token: string; refresh_token?: string; code: string; verifier: string } & Record<string, unknown>> {
  const { verifier, challenge } = pkcePair();
  const redirectUri = options.redirectUri ?? NATIVE_REDIRECT;
  const resource = options.resource ?? stack.mcpUrl;
  const params = await authorizeCode(stack, { clientId, challenge, redirectUri, scope: options.scope, resource });
  const code = params.get('code');
  if (!code) throw new Error(`no code: ${params.toString()}`);
  const res = await postForm(stack.metadata.token_endpoint, codeGrantForm({ code, clientId, verifier, resource, redirectUri }));
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
  return { ...(res.body as { access_token: string; refresh_token?: string }), code, verifier };
}

export function refresh(stack: AttackStack, clientId: string, refreshToken: string): Promise<JsonResponse> {
  return postForm(stack.metadata.token_endpoint, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: clientId,
    resource: stack.mcpUrl,
  });
}

/** One MCP tools/call on the 2025-11-25 wire with a bearer token (stateless server). */
export async function callTool(
  mcpUrl: string,
  token: string | undefined,
  tool: { name: string; arguments?: Record<string, unknown> },
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(token && { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: tool.arguments ?? {} } }),
  });
}

/** `whoami` (needs notes:read) through {@link callTool}. */
export function callWhoami(mcpUrl: string, token: string | undefined, headers: Record<string, string> = {}): Promise<Response> {
  return callTool(mcpUrl, token, { name: 'whoami' }, headers);
}

/** Registered OAuth error codes (RFC 6749 §4.1.2.1/§5.2, RFC 7591 §3.2.2, RFC 7009, RFC 8707, RFC 9449, RFC 6750). */
export const REGISTERED_ERRORS = new Set([
  'invalid_request',
  'unauthorized_client',
  'access_denied',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'invalid_software_statement',
  'unapproved_software_statement',
  'unsupported_token_type',
  'invalid_target',
  'invalid_dpop_proof',
  'use_dpop_nonce',
  'invalid_token',
  'insufficient_scope',
  'login_required',
  'consent_required',
  'interaction_required',
  'invalid_request_uri',
  'invalid_request_object',
  'request_not_supported',
  'request_uri_not_supported',
  'registration_not_supported',
  'account_selection_required',
  'slow_down',
  'authorization_pending',
  'expired_token',
  'invalid_authorization_details',
]);

/** No stack frames or file paths in a response body. */
export function leaksInternals(text: string): boolean {
  return /\n\s+at |\bat [\w$.<>]+ \(|\/(?:work|home|usr|node_modules|src|dist)\/|[A-Z]:\\|\.(?:ts|js|mjs):\d+/.test(text);
}

/**
 * A TCP listener on a loopback address that records every connection and closes it at once:
 * the target of an SSRF attempt. "No connection" means `sockets` stays empty.
 */
export interface CountingListener {
  port: number;
  sockets: Socket[];
  close(): void;
}

export function listenCounting(host = '127.0.0.1'): Promise<CountingListener | undefined> {
  return new Promise((resolve) => {
    const sockets: Socket[] = [];
    const server = createTcpServer((socket) => {
      sockets.push(socket);
      socket.destroy();
    });
    server.once('error', () => resolve(undefined));
    server.listen(0, host, () => resolve({ port: (server.address() as AddressInfo).port, sockets, close: () => server.close() }));
  });
}

/**
 * The machine's host name when it resolves (from /etc/hosts, no DNS) to loopback only: a name
 * that is not loopback by its text. Undefined when the machine has no such name.
 */
export async function loopbackResolvingHostname(): Promise<string | undefined> {
  const name = hostname();
  if (/(?:^|\.)localhost\.?$/i.test(name)) return undefined;
  const answers = await lookup(name, { all: true }).catch(() => []);
  return answers.length > 0 && answers.every((a) => a.address.startsWith('127.') || a.address === '::1') ? name : undefined;
}

/** An ES256 DPoP key pair with its public JWK and RFC 7638 thumbprint (the `jkt` RFC 9449 §6 binds to). */
export interface DpopKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

export async function dpopKey(): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

/** A fresh RFC 9449 §4.2 proof for a POST to `htu` (a token endpoint), signed by `key`. */
export function dpopPostProof(key: DpopKey, htu: string): Promise<string> {
  return new SignJWT({ jti: randomUUID(), htm: 'POST', htu, iat: Math.floor(Date.now() / 1000) })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })
    .sign(key.privateKey);
}

/**
 * RFC 8414 metadata of a scripted (hostile or broken) AS at `self`: the usual endpoints and S256;
 * `extra` adds members or overrides them (a forged `issuer`, more grant types).
 */
export function scriptedAsMetadata(self: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    issuer: self,
    authorization_endpoint: `${self}/authorize`,
    token_endpoint: `${self}/token`,
    registration_endpoint: `${self}/register`,
    code_challenge_methods_supported: ['S256'],
    ...extra,
  };
}

/**
 * An authorization request (S256, state `s`) of a registered public native client for the demo
 * resource at an AS started on its own (`${issuer}/auth`, no AttackStack): what reaches its login
 * page. `extra` sets or replaces parameters (another resource, a known challenge, `prompt`).
 */
export function loginPageUrl(issuer: string, clientId: string, extra: Record<string, string> = {}): URL {
  const url = new URL(`${issuer}/auth`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: NATIVE_REDIRECT,
    scope: 'notes:read',
    resource: 'http://localhost:3000/mcp',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 's',
    ...extra,
  })) {
    url.searchParams.set(k, v);
  }
  return url;
}

/**
 * A password login as `username` on an AS started on its own, through a freshly registered
 * public client's login page: 303 (signed in) or the status the login form answered with.
 */
export async function passwordLogin(server: RunningAuthServer, username: string, password: string, clientName: string): Promise<number> {
  const reg = await postJson(`${server.url}/reg`, {
    client_name: clientName,
    redirect_uris: [NATIVE_REDIRECT],
    token_endpoint_auth_method: 'none',
  });
  const authorize = loginPageUrl(server.issuer, reg.body.client_id as string);
  const jar = new CookieJar();
  const page = await frontChannel(server.issuer, authorize, jar);
  if (page.kind !== 'stopped' || page.status !== 200) throw new Error('expected the login page');
  const action = new URL(/<form method="post" action="([^"]+)"/.exec(page.body)![1]!.replace(/&amp;/g, '&'), server.issuer).href;
  const res = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: await jar.getCookieString(action) },
    body: new URLSearchParams({ csrf: /name="csrf" value="([^"]+)"/.exec(page.body)![1]!, action: 'login', username, password }).toString(),
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Signs up or in at the AS through its first upstream provider as `login` (the upstream login
 * name, which the test upstream IdP also makes the `sub`), up to our consent page.
 */
export async function upstreamSignInToConsent(stack: AttackStack, clientId: string, login: string): Promise<void> {
  const ua = new HeadlessBrowser();
  const page = await ua.follow(authorizationUrl(stack, { clientId, challenge: pkcePair().challenge }), NATIVE_REDIRECT);
  if (isUrl(page)) throw new Error('expected the login page');
  const idpPage = await ua.submit(page, { upstream: '0' }, NATIVE_REDIRECT);
  if (isUrl(idpPage)) throw new Error('expected the upstream login page');
  const consent = await ua.submit(idpPage, { login }, NATIVE_REDIRECT);
  if (isUrl(consent) || !consent.body.includes('Authorize access')) throw new Error('expected the consent page');
}
