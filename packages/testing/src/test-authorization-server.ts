/**
 * Our real authorization server (`createAuthorizationServer`, memory storage) on an ephemeral
 * loopback port, with helpers that obtain tokens through real grants over HTTP.
 */
import express from 'express';
import {
  createAuthorizationServer,
  openStore,
  silentLogger,
  type AuthorizationServer,
  type AuthorizationServerConfig,
  type ResourceConfig,
  type Store,
} from '@mcp-auth-kit/authorization-server';
import { fetchAsEndpoints, runCodeFlow, tokenRequest, type TokenResponse } from './code-flow.js';
import { decodeAccessToken } from './jwt.js';
import { startLoopbackServer, type LoopbackServer } from './loopback-server.js';
import { createLoopbackCertificate, type LoopbackCertificate } from './loopback-certificate.js';
import { startClientMetadataHost, type ClientMetadataHost } from './client-metadata-host.js';
import { loginHintHandler } from './login-hint.js';
import { createTestAccounts, type TestAccounts } from './test-accounts.js';
import { DEFAULT_REDIRECT, KIT_CLIENT, KIT_CLIENT_ID, registerTestClient, resolveClient } from './test-clients.js';
import { createTokenMinter } from './token-lifetime.js';
import { introspectToken, revokeToken } from './token-operations.js';
import type {
  AuthorizeOptions,
  IssuedTokens,
  RotatedKeys,
  StartTestAuthorizationServerOptions,
  TestAuthorizationServer,
  TestUser,
} from './test-authorization-server-options.js';

export type {
  AuthorizeOptions,
  IssuedTokens,
  RegisteredClient,
  RotatedKeys,
  StartTestAuthorizationServerOptions,
  TestAuthorizationServer,
  TestClient,
  TestUser,
  TokenRequestOptions,
} from './test-authorization-server-options.js';

/** What {@link startTestAuthorizationServer} assumes for an option not given. */
const DEFAULTS = {
  users: ['test-user'],
  autoLogin: true,
  hostname: '127.0.0.1',
  logger: silentLogger,
  /** `rotateKeys`: how long the previous signing key stays published. */
  retireAfterSeconds: 3600,
} as const;

function toResourceConfigs(resources: StartTestAuthorizationServerOptions['resources']): ResourceConfig[] {
  return Object.entries(resources ?? {}).map(([resource, scopes]) => ({
    resource,
    scopes: Array.isArray(scopes) ? Object.fromEntries(scopes.map((s: string) => [s, s])) : { ...(scopes as Record<string, string>) },
  }));
}

/** What runs while the test AS is up, closed in this order; `as` is swapped by `rotateKeys`. */
interface Parts {
  host?: ClientMetadataHost | undefined;
  listener?: LoopbackServer | undefined;
  as?: AuthorizationServer | undefined;
  store: Store;
}

/** The running test AS: its parts and what its helpers need. */
interface Running {
  parts: Parts;
  issuer: string;
  port: number;
  resources: ResourceConfig[];
  config: AuthorizationServerConfig;
  metadata: TestAuthorizationServer['metadata'];
  accounts: TestAccounts;
  defaultUser: string;
  certificate: LoopbackCertificate | undefined;
  mintWith: ReturnType<typeof createTokenMinter>;
}

export async function startTestAuthorizationServer(options: StartTestAuthorizationServerOptions): Promise<TestAuthorizationServer> {
  const resources = toResourceConfigs(options.resources);
  const users: TestUser[] = (options.users?.length ? options.users : DEFAULTS.users).map((u) =>
    typeof u === 'string' ? { username: u } : { ...u },
  );
  const autoLogin = options.autoLogin ?? DEFAULTS.autoLogin;
  const defaultUser = typeof autoLogin === 'string' ? autoLogin : users[0]!.username;
  const certificate: LoopbackCertificate | undefined = options.cimd === false ? undefined : await createLoopbackCertificate();

  const parts: Parts = { store: await openStore({ kind: 'memory' }) };
  try {
    // Accounts are created here so that `sub` is the username (readable test expectations).
    const accounts = await createTestAccounts(parts.store, users);
    const listener = await startLoopbackServer();
    parts.listener = listener;
    const issuer = `http://${options.hostname ?? DEFAULTS.hostname}:${listener.port}`;
    const config: AuthorizationServerConfig = {
      issuer,
      resources,
      storage: parts.store,
      logger: options.logger ?? DEFAULTS.logger,
      accessTokenTTL: options.accessTokenTTL,
      ...(autoLogin !== false && { devAutoLogin: defaultUser }),
      ...(certificate && { cimd: { allowPrivateNetwork: true, extraCaCertificates: certificate.cert } }),
      registration: { rateLimit: false },
      clients: [KIT_CLIENT, ...(options.clients ?? [])],
      ...options.config,
    };
    parts.as = await createAuthorizationServer(config);
    listener.handle(frontApp(parts, autoLogin !== false));
    const metadata = await fetchAsEndpoints(issuer);
    const running: Running = {
      parts,
      issuer,
      port: listener.port,
      resources,
      config,
      metadata,
      accounts,
      defaultUser,
      certificate,
      mintWith: createTokenMinter(),
    };
    return handleOf(running);
  } catch (err) {
    for (const close of closers(parts)) await close().catch(() => {});
    throw err;
  }
}

/** The AS's app behind the listener (whichever one `parts.as` holds: rotateKeys swaps it), with the login-hint sign-in when logins are automatic. */
function frontApp(parts: Parts, autoLogin: boolean): express.Express {
  const front = express();
  front.disable('x-powered-by');
  if (autoLogin) {
    const hintedLogin = loginHintHandler(() => parts.as!, parts.store);
    front.get('/interaction/:uid', (req, res, next) => void hintedLogin(req, res, next));
  }
  front.use((req, res, next) => parts.as!.app(req, res, next));
  return front;
}

/** How to close each part that started, in order. */
function closers(parts: Parts): (() => Promise<void>)[] {
  const { host, listener, as, store } = parts;
  return [host && (() => host.close()), listener && (() => listener.close()), as && (() => as.close()), () => store.close()].filter(
    (close): close is () => Promise<void> => close !== undefined,
  );
}

function handleOf(r: Running): TestAuthorizationServer {
  const { parts, metadata } = r;
  let closed = false;
  return {
    issuer: r.issuer,
    port: r.port,
    metadata,
    get authorizationServer() {
      return parts.as!;
    },
    store: parts.store,
    defaultClient: { clientId: KIT_CLIENT_ID, redirectUri: DEFAULT_REDIRECT },
    authorize: (o) => authorize(r, o),
    async issueAccessToken(o = {}) {
      return (await authorize(r, o)).access_token;
    },
    async refresh(refreshToken, o = {}) {
      const client = resolveClient(o.client);
      const params: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshToken };
      if (o.resource) params.resource = o.resource;
      if (o.scopes) params.scope = o.scopes.join(' ');
      return withClaims(await r.mintWith(undefined, undefined, () => tokenRequest(metadata, client, params)));
    },
    revoke: (token, o = {}) => revokeToken(metadata, resolveClient(o.client), token, o.hint),
    introspect: (token, o = {}) => introspectToken(metadata, resolveClient(o.client), token),
    rotateKeys: (o = {}) => rotateKeys(r, o.retireAfterSeconds ?? DEFAULTS.retireAfterSeconds),
    registerClient: (extra = {}) => registerTestClient(metadata, extra),
    async clientMetadataHost() {
      const { certificate } = r;
      if (!certificate) throw new Error('CIMD support is off (cimd: false)');
      parts.host ??= await startClientMetadataHost({ certificate });
      return parts.host;
    },
    passwordOf(username) {
      const password = r.accounts.password(username);
      if (password === undefined) throw new TypeError(`no user ${username}`);
      return password;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const close of closers(parts)) await close();
    },
  };
}

function resolveResource(resources: ResourceConfig[], resource?: string): ResourceConfig {
  if (resource === undefined) {
    if (resources.length !== 1) throw new TypeError('resource is required when the AS has several resources');
    return resources[0]!;
  }
  const found = resources.find((r) => r.resource === resource);
  if (!found) throw new TypeError(`resource ${resource} is not configured on the test AS`);
  return found;
}

const withClaims = (tokens: TokenResponse): IssuedTokens => ({ ...tokens, claims: decodeAccessToken(tokens.access_token).claims });

async function authorize(r: Running, o: AuthorizeOptions = {}): Promise<IssuedTokens> {
  const resource = resolveResource(r.resources, o.resource);
  const client = resolveClient(o.client);
  const subject = o.subject ?? r.defaultUser;
  if (o.lifetime !== undefined && !(Number.isSafeInteger(o.lifetime) && o.lifetime > 0)) {
    throw new TypeError('lifetime must be a positive integer (seconds)');
  }
  await r.accounts.ensure(subject);
  const tokens = withClaims(
    await runCodeFlow({
      endpoints: r.metadata,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      redirectUri: client.redirectUri,
      resource: resource.resource,
      scope: (o.scopes ?? Object.keys(resource.scopes)).join(' '),
      loginHint: subject,
      credentials: { username: subject, password: r.accounts.password(subject) ?? '' },
      extraParams: o.params,
      wrapTokenRequest: (send) => r.mintWith(resource, o.lifetime, send),
    }),
  );
  if (o.lifetime !== undefined) {
    const { exp, iat } = tokens.claims;
    if (typeof exp !== 'number' || typeof iat !== 'number' || exp - iat !== o.lifetime) {
      throw new Error(`the authorization server did not apply lifetime ${o.lifetime}s (got exp - iat = ${Number(exp) - Number(iat)})`);
    }
  }
  return tokens;
}

async function rotateKeys(r: Running, retireAfterSeconds: number): Promise<RotatedKeys> {
  const { store } = r.parts;
  const before = await store.keys.signingKeys();
  const previousKid = (before.find((k) => k.status === 'current') ?? before[0])?.jwk.kid;
  const after = await store.keys.rotateSigningKeys(retireAfterSeconds);
  const currentKid = (after.find((k) => k.status === 'current') ?? after[0])?.jwk.kid;
  // The AS reads its signing keys once, when it is created: build a new one on the same
  // store and swap it in behind the same port (sessions, grants and clients survive).
  const next = await createAuthorizationServer(r.config);
  const old = r.parts.as!;
  r.parts.as = next;
  await old.close();
  return { previousKid, currentKid };
}
