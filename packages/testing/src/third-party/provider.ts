/**
 * A loopback third-party service with its own OAuth 2 authorization server: it stands for the
 * outside API (a drive) that an MCP server reaches on a user's behalf through our AS's token
 * vault. RFC 8414 metadata, an authorization endpoint with sign-in and consent pages (PKCE S256
 * required, `state` echoed, RFC 9207 `iss`), a token endpoint for confidential clients
 * (`authorization_code`, rotating `refresh_token`), RFC 7009 revocation, and a small API. It
 * records every request it receives, so a test can show what never reached it (the MCP token).
 */
import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { startLoopbackServer } from '../loopback-server.js';
import { authorizationEndpoint } from './authorization-endpoint.js';
import { sendJson, sendOAuthError } from './oauth-response.js';
import { FILES_SCOPE, providerApi, type ApiUser } from './provider-api.js';
import type {
  RecordedRequest,
  StartThirdPartyProviderOptions,
  ThirdPartyClient,
  ThirdPartyProvider,
  ThirdPartyUser,
} from './provider-options.js';
import { FORM_PATH } from './provider-pages.js';
import { ProviderSessions } from './provider-sessions.js';
import { ProviderTokens } from './provider-tokens.js';
import { revocationEndpoint } from './revocation-endpoint.js';
import { tokenEndpoint } from './token-endpoint.js';

const randomSecret = () => randomBytes(18).toString('base64url');

interface Account extends ApiUser {
  password: string;
}

function accountOf(user: ThirdPartyUser): Account {
  const files = user.files ?? [{ name: `${user.username}-notes.txt`, content: `Notes of ${user.username}` }];
  return {
    password: user.password ?? randomSecret(),
    ...(user.displayName !== undefined && { displayName: user.displayName }),
    files: files.map((f, i) => ({ id: f.id ?? `f${i + 1}`, name: f.name, content: f.content ?? '' })),
  };
}

/** The page headers but the CSP, which each page sets (provider-pages.ts `pageCsp`): no referrer, no framing, no sniffing. */
const pageHeaders = helmet({
  contentSecurityPolicy: false,
  referrerPolicy: { policy: 'no-referrer' },
  xFrameOptions: { action: 'deny' },
});

/** What {@link startThirdPartyProvider} assumes for an option not given. */
const DEFAULTS = {
  displayName: 'Drive',
  scopes: [FILES_SCOPE],
  hostname: '127.0.0.1',
  accessTokenLifetime: 3600,
  codeLifetime: 60,
  responseIss: 'send',
} as const;

/** Starts the provider on 127.0.0.1 (port 0 unless `port` is given). */
export async function startThirdPartyProvider(options: StartThirdPartyProviderOptions): Promise<ThirdPartyProvider> {
  const service = options.displayName ?? DEFAULTS.displayName;
  const scopes = [...(options.scopes ?? DEFAULTS.scopes)];
  const responseIss = options.responseIss ?? DEFAULTS.responseIss;
  const accounts = new Map<string, Account>();
  for (const entry of options.users) {
    const user = typeof entry === 'string' ? { username: entry } : entry;
    accounts.set(user.username, accountOf(user));
  }
  const clients = new Map<string, ThirdPartyClient>();
  const registerClient: ThirdPartyProvider['registerClient'] = (client) => {
    const registered = { ...client, clientSecret: client.clientSecret ?? randomSecret(), redirectUris: [...client.redirectUris] };
    clients.set(registered.clientId, registered);
    return { ...registered, redirectUris: [...registered.redirectUris] };
  };
  for (const client of options.clients ?? []) registerClient(client);
  const findClient = (clientId: string) => clients.get(clientId);

  const server = await startLoopbackServer(undefined, { port: options.port });
  const issuer = `http://${options.hostname ?? DEFAULTS.hostname}:${server.port}`;
  const metadata = providerMetadata(issuer, scopes, responseIss !== 'unadvertised');
  const tokens = new ProviderTokens({
    accessToken: options.accessTokenLifetime ?? DEFAULTS.accessTokenLifetime,
    code: options.codeLifetime ?? DEFAULTS.codeLifetime,
  });
  const passwordOf = (username: string) => accounts.get(username)?.password;
  const requests: RecordedRequest[] = [];
  server.handle(
    providerApp(metadata, requests, {
      authorization: authorizationEndpoint({
        issuer,
        service,
        scopes,
        responseIss,
        findClient,
        passwordOf,
        sessions: new ProviderSessions(),
        tokens,
      }),
      token: tokenEndpoint(tokens, findClient),
      revoke: revocationEndpoint(tokens, findClient),
      api: providerApi(service, tokens, (username) => accounts.get(username)),
    }),
  );

  return {
    issuer,
    port: server.port,
    metadata,
    apiBase: `${issuer}/api`,
    registerClient,
    passwordOf,
    grants: (username) => tokens.grants(username),
    revokeGrants: (username) => tokens.revokeUser(username),
    requests,
    requestsContaining(value) {
      if (value === '') return [];
      // As sent, or percent-encoded in a query or form body.
      const has = (text: string) => text.includes(value) || text.includes(encodeURIComponent(value));
      return requests.filter((r) => has(r.url) || has(r.body) || Object.values(r.headers).some(has));
    },
    close: () => server.close(),
  };
}

/** RFC 8414 metadata of the provider at `issuer`. */
function providerMetadata(issuer: string, scopes: string[], advertiseIss: boolean): Record<string, unknown> {
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    authorization_endpoint: at('/authorize'),
    token_endpoint: at('/token'),
    revocation_endpoint: at('/revoke'),
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    scopes_supported: scopes,
    authorization_response_iss_parameter_supported: advertiseIss,
  };
}

/** The provider's endpoints, as built from its options. */
interface Endpoints {
  authorization: ReturnType<typeof authorizationEndpoint>;
  token: ReturnType<typeof tokenEndpoint>;
  revoke: ReturnType<typeof revocationEndpoint>;
  api: ReturnType<typeof providerApi>;
}

const noStore = (_req: Request, res: Response, next: NextFunction) => {
  res.set('cache-control', 'no-store');
  next();
};

const form = (req: Request) => new URLSearchParams(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');

/** The provider's routes, each request recorded in `requests` first. */
function providerApp(metadata: Record<string, unknown>, requests: RecordedRequest[], endpoints: Endpoints): express.Express {
  const { authorization, token, revoke, api } = endpoints;
  const app = express();
  app.disable('x-powered-by');
  // Every body is read raw (and recorded as it arrived); forms are parsed from it.
  app.use(express.raw({ type: () => true, limit: '64kb' }));
  app.use((req, _res, next) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = String(value);
    requests.push({ method: req.method, url: req.originalUrl, headers, body: Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '' });
    next();
  });
  const pages = [pageHeaders, noStore];
  app.get('/.well-known/oauth-authorization-server', (_req, res) => void sendJson(res, 200, metadata));
  app.get('/authorize', ...pages, (req, res) => authorization.start(req, res));
  app.post(FORM_PATH, ...pages, (req, res) => authorization.submit(req, res, form(req)));
  app.post('/token', (req, res) => token(req, res, form(req)));
  app.post('/revoke', (req, res) => revoke(req, res, form(req)));
  app.get('/api/files', (req, res) => api.files(req, res));
  app.get('/api/whoami', (req, res) => api.whoami(req, res));
  app.use((_req, res) => void sendOAuthError(res, 404, 'not_found', 'no such endpoint'));
  app.use((err: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (!res.headersSent)
      sendOAuthError(res, status, status === 500 ? 'server_error' : 'invalid_request', 'the request could not be handled');
  });
  return app;
}
