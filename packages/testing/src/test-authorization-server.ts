/**
 * Our real authorization server (`createAuthorizationServer`, memory storage) on an ephemeral
 * loopback port, with helpers that obtain tokens through real grants over HTTP.
 */
import { randomBytes } from 'node:crypto';
import express, { type Request, type Response, type NextFunction } from 'express';
import {
  createAuthorizationServer,
  hashPassword,
  openStore,
  silentLogger,
  type AuthorizationServer,
  type AuthorizationServerConfig,
  type Logger,
  type ResourceConfig,
  type Store,
} from '@mcp-auth-kit/authorization-server';
import {
  AuthorizationFlowError,
  fetchAsEndpoints,
  postForm,
  runCodeFlow,
  tokenRequest,
  type AsEndpoints,
  type TokenResponse,
} from './code-flow.js';
import { decodeAccessToken, type AccessTokenClaims } from './jwt.js';
import { startLoopbackServer, type LoopbackServer } from './loopback-server.js';
import { createLoopbackCertificate, type LoopbackCertificate } from './loopback-certificate.js';
import { startClientMetadataHost, type ClientMetadataHost } from './client-metadata-host.js';

export interface TestUser {
  username: string;
  /** Typed into the login page when auto-login is off (default: a random one, see `passwordOf`). */
  password?: string;
  displayName?: string;
}

export interface StartTestAuthorizationServerOptions {
  /** Protected resources: resource URI → its scopes (a list, or scope → consent description). */
  resources: Record<string, readonly string[] | Record<string, string>>;
  /** Accounts; in the test AS an account's `sub` is its username. Default: one user `test-user`. */
  users?: readonly (TestUser | string)[];
  /** Extra pre-registered clients (oidc-provider / RFC 7591 metadata). */
  clients?: NonNullable<AuthorizationServerConfig['clients']>;
  /**
   * Sign users in and approve consent without pages (default true). `true` auto-logs in the
   * first user, or the user named by `login_hint`; a username picks the default user; `false`
   * makes the helpers fill in the real login and consent forms.
   */
  autoLogin?: boolean | string;
  /** Host name in the issuer (default `127.0.0.1`; the server always listens on 127.0.0.1). */
  hostname?: '127.0.0.1' | 'localhost';
  /** Default access token lifetime in seconds (default 300). */
  accessTokenTTL?: number;
  /**
   * CIMD: a loopback HTTPS host for client metadata documents is trusted by the AS (default
   * true; generates a self-signed certificate at start).
   */
  cimd?: boolean;
  /** Receives the AS's logs (default: silent). */
  logger?: Logger;
  /** Any other AS option, merged last (expert use). */
  config?: Partial<AuthorizationServerConfig>;
}

export interface TokenRequestOptions {
  /** Resource URI (RFC 8707); default: the only configured resource. */
  resource?: string;
  /** Scopes to request; default: every scope of the resource. */
  scopes?: readonly string[];
  /** Username whose token this is (default: the default user). */
  subject?: string;
  /** Access token lifetime in seconds for this token (default: the AS's). */
  lifetime?: number;
}

export interface AuthorizeOptions extends TokenRequestOptions {
  /** client_id (a registered id or a CIMD URL) or a client; default the kit's public client. */
  client?: string | TestClient;
  /** Extra authorization request parameters. */
  params?: Record<string, string>;
}

export interface TestClient {
  clientId: string;
  clientSecret?: string;
  /** Default `http://127.0.0.1/callback` (nothing listens there: the flow stops at the redirect). */
  redirectUri?: string;
}

export interface RegisteredClient extends TestClient {
  redirectUri: string;
  /** The registration response (RFC 7591 §3.2.1). */
  registration: Record<string, unknown>;
}

export interface IssuedTokens extends TokenResponse {
  /** The access token's (unverified) payload. */
  claims: AccessTokenClaims;
}

export interface RotatedKeys {
  /** kid that signed until now (still published until it retires). */
  previousKid: string | undefined;
  /** kid that signs from now on. */
  currentKid: string | undefined;
}

export interface TestAuthorizationServer {
  /** Issuer identifier, e.g. `http://127.0.0.1:41234`. */
  issuer: string;
  port: number;
  /** The AS's RFC 8414 metadata. */
  metadata: AsEndpoints;
  /** The running AS (replaced by `rotateKeys`). */
  readonly authorizationServer: AuthorizationServer;
  store: Store;
  /** The kit's pre-registered public client (`authorization_code` + `refresh_token`, PKCE). */
  defaultClient: Required<Omit<TestClient, 'clientSecret'>>;
  /** Runs the authorization code flow with PKCE and returns the token response. */
  authorize(options?: AuthorizeOptions): Promise<IssuedTokens>;
  /** `authorize` that returns just the access token. */
  issueAccessToken(options?: TokenRequestOptions): Promise<string>;
  /** refresh_token grant (the refresh token rotates). */
  refresh(
    refreshToken: string,
    options?: { client?: string | TestClient; resource?: string; scopes?: readonly string[] },
  ): Promise<IssuedTokens>;
  /**
   * RFC 7009 revocation at the AS. Refresh tokens (and their grant) are revoked; the AS's JWT
   * access tokens cannot be (rejects with error `unsupported_token_type`).
   */
  revoke(token: string, options?: { client?: string | TestClient; hint?: 'access_token' | 'refresh_token' }): Promise<void>;
  /** RFC 7662 introspection of a refresh token or a JWT access token (inactive once its grant is revoked). */
  introspect(token: string, options?: { client?: string | TestClient }): Promise<Record<string, unknown>>;
  /** Rotates the signing keys in the store and restarts the AS in place (same port, same store). */
  rotateKeys(options?: { retireAfterSeconds?: number }): Promise<RotatedKeys>;
  /**
   * RFC 7591 Dynamic Client Registration at the AS's registration endpoint. Defaults: a public
   * native client with the kit's redirect URI and the authorization_code + refresh_token grants.
   */
  registerClient(metadata?: Record<string, unknown>): Promise<RegisteredClient>;
  /** The loopback HTTPS host for CIMD documents (started on first use; trusted by this AS). */
  clientMetadataHost(): Promise<ClientMetadataHost>;
  /** The password of a user (given, or generated at start). */
  passwordOf(username: string): string;
  close(): Promise<void>;
}

const DEFAULT_REDIRECT = 'http://127.0.0.1/callback';
const KIT_CLIENT_ID = 'mcp-auth-kit-testing';

function toResourceConfigs(resources: StartTestAuthorizationServerOptions['resources']): ResourceConfig[] {
  return Object.entries(resources ?? {}).map(([resource, scopes]) => ({
    resource,
    scopes: Array.isArray(scopes) ? Object.fromEntries(scopes.map((s: string) => [s, s])) : { ...(scopes as Record<string, string>) },
  }));
}

/** Runs async jobs one at a time, in call order. */
function createMutex() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(run: () => Promise<T>): Promise<T> => {
    const result = tail.then(run, run);
    tail = result.catch(() => undefined);
    return result;
  };
}

export async function startTestAuthorizationServer(options: StartTestAuthorizationServerOptions): Promise<TestAuthorizationServer> {
  const resources = toResourceConfigs(options.resources);
  const users: TestUser[] = (options.users?.length ? options.users : ['test-user']).map((u) =>
    typeof u === 'string' ? { username: u } : { ...u },
  );
  const passwords = new Map(users.map((u) => [u.username.toLowerCase(), u.password ?? randomBytes(12).toString('base64url')]));
  const autoLogin = options.autoLogin ?? true;
  const defaultUser = typeof autoLogin === 'string' ? autoLogin : users[0]!.username;
  const certificate: LoopbackCertificate | undefined = options.cimd === false ? undefined : await createLoopbackCertificate();

  const store = await openStore({ kind: 'memory' });
  let listener: LoopbackServer | undefined;
  let as: AuthorizationServer | undefined;
  let host: ClientMetadataHost | undefined;
  try {
    // Accounts are created here so that `sub` is the username (readable test expectations).
    for (const user of users) {
      if (await store.accounts.findByUsername(user.username)) continue;
      await store.accounts.create({
        id: user.username,
        username: user.username,
        passwordHash: await hashPassword(passwords.get(user.username.toLowerCase())!),
        displayName: user.displayName,
        disabled: false,
      });
    }

    listener = await startLoopbackServer();
    const issuer = `http://${options.hostname ?? '127.0.0.1'}:${listener.port}`;
    const config: AuthorizationServerConfig = {
      issuer,
      resources,
      storage: store,
      logger: options.logger ?? silentLogger,
      accessTokenTTL: options.accessTokenTTL,
      ...(autoLogin !== false && { devAutoLogin: defaultUser }),
      ...(certificate && { cimd: { allowPrivateNetwork: true, extraCaCertificates: certificate.cert } }),
      registration: { rateLimit: false },
      clients: [
        {
          client_id: KIT_CLIENT_ID,
          client_name: 'mcp-auth-kit testing client',
          application_type: 'native',
          redirect_uris: [DEFAULT_REDIRECT],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
        ...(options.clients ?? []),
      ],
      ...options.config,
    };

    as = await createAuthorizationServer(config);
    const front = express();
    front.disable('x-powered-by');
    front.get('/interaction/:uid', (req, res, next) => void hintedLogin(req, res, next));
    front.use((req, res, next) => as!.app(req, res, next));
    listener.handle(front);

    // Test-only (the AS's dev auto-login is on, loopback only): sign in the account named by
    // `login_hint` instead of the fixed dev user, so one AS serves tokens for several subjects.
    async function hintedLogin(req: Request, res: Response, next: NextFunction): Promise<void> {
      if (autoLogin === false) return next();
      try {
        const provider = as!.provider;
        const details = await provider.interactionDetails(req, res);
        const hint = details.params.login_hint;
        if (details.prompt.name !== 'login' || typeof hint !== 'string') return next();
        const account = await store.accounts.findByUsername(hint);
        if (!account || account.disabled) return next();
        const target = await provider.interactionResult(req, res, { login: { accountId: account.id } }, { mergeWithLastSubmission: false });
        res.redirect(303, target);
      } catch {
        next();
      }
    }

    const metadata = await fetchAsEndpoints(issuer);
    let closed = false;

    const resolveResource = (resource?: string): ResourceConfig => {
      if (resource === undefined) {
        if (resources.length !== 1) throw new TypeError('resource is required when the AS has several resources');
        return resources[0]!;
      }
      const found = resources.find((r) => r.resource === resource);
      if (!found) throw new TypeError(`resource ${resource} is not configured on the test AS`);
      return found;
    };
    const resolveClient = (
      client: string | TestClient | undefined,
    ): Required<Omit<TestClient, 'clientSecret'>> & { clientSecret?: string } => {
      if (client === undefined) return { clientId: KIT_CLIENT_ID, redirectUri: DEFAULT_REDIRECT };
      if (typeof client === 'string') return { clientId: client, redirectUri: DEFAULT_REDIRECT };
      return { ...client, redirectUri: client.redirectUri ?? DEFAULT_REDIRECT };
    };
    const withClaims = (tokens: TokenResponse): IssuedTokens => ({ ...tokens, claims: decodeAccessToken(tokens.access_token).claims });

    async function ensureUser(username: string): Promise<void> {
      if (await store.accounts.findByUsername(username)) return;
      const password = randomBytes(12).toString('base64url');
      passwords.set(username.toLowerCase(), password);
      await store.accounts.create({ id: username, username, passwordHash: await hashPassword(password), disabled: false });
    }

    async function authorize(o: AuthorizeOptions = {}): Promise<IssuedTokens> {
      const resource = resolveResource(o.resource);
      const client = resolveClient(o.client);
      const subject = o.subject ?? defaultUser;
      if (o.lifetime !== undefined && !(Number.isSafeInteger(o.lifetime) && o.lifetime > 0)) {
        throw new TypeError('lifetime must be a positive integer (seconds)');
      }
      await ensureUser(subject);
      const tokens = withClaims(
        await runCodeFlow({
          endpoints: metadata,
          clientId: client.clientId,
          clientSecret: client.clientSecret,
          redirectUri: client.redirectUri,
          resource: resource.resource,
          scope: (o.scopes ?? Object.keys(resource.scopes)).join(' '),
          loginHint: subject,
          credentials: { username: subject, password: passwords.get(subject.toLowerCase()) ?? '' },
          extraParams: o.params,
          wrapTokenRequest: (send) => mintWith(resource, o.lifetime, send),
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

    // The AS reads a resource's accessTokenTTL when it mints a token (token endpoint). Every
    // token request goes through one queue so a `lifetime` set for one request never leaks
    // into a concurrent one.
    const queue = createMutex();
    function mintWith(
      resource: ResourceConfig | undefined,
      lifetime: number | undefined,
      send: () => Promise<TokenResponse>,
    ): Promise<TokenResponse> {
      return queue(async () => {
        if (!resource || lifetime === undefined) return send();
        const saved = resource.accessTokenTTL;
        resource.accessTokenTTL = lifetime;
        try {
          return await send();
        } finally {
          if (saved === undefined) delete resource.accessTokenTTL;
          else resource.accessTokenTTL = saved;
        }
      });
    }

    const handle: TestAuthorizationServer = {
      issuer,
      port: listener.port,
      metadata,
      get authorizationServer() {
        return as!;
      },
      store,
      defaultClient: { clientId: KIT_CLIENT_ID, redirectUri: DEFAULT_REDIRECT },
      authorize,
      async issueAccessToken(o = {}) {
        return (await authorize(o)).access_token;
      },
      async refresh(refreshToken, o = {}) {
        const client = resolveClient(o.client);
        const params: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshToken };
        if (o.resource) params.resource = o.resource;
        if (o.scopes) params.scope = o.scopes.join(' ');
        return withClaims(await mintWith(undefined, undefined, () => tokenRequest(metadata, client, params)));
      },
      async revoke(token, o = {}) {
        if (!metadata.revocation_endpoint) throw new Error('the AS advertises no revocation_endpoint');
        const client = resolveClient(o.client);
        const res = await postForm(metadata.revocation_endpoint, client, { token, ...(o.hint && { token_type_hint: o.hint }) });
        if (res.status === 200) return;
        const body = (await res.json().catch(() => ({}))) as { error?: string };
        if (body.error === 'unsupported_token_type') {
          // RFC 7009 §2.2.1: the AS issues self-contained JWT access tokens and cannot revoke
          // them; they stay valid at resource servers until `exp` (use a short `lifetime`).
          throw new AuthorizationFlowError(
            'revocation endpoint: the AS cannot revoke JWT access tokens (unsupported_token_type); revoke the refresh token or use a short lifetime',
            body.error,
          );
        }
        throw new AuthorizationFlowError(`revocation endpoint: HTTP ${res.status} ${body.error ?? ''}`.trim(), body.error);
      },
      async introspect(token, o = {}) {
        if (!metadata.introspection_endpoint) throw new Error('the AS advertises no introspection_endpoint');
        // RFC 7662 §4: the AS answers only the client a token was issued to (or the resource
        // server it is for), so by default ask as the client that holds the token.
        const res = await postForm(metadata.introspection_endpoint, resolveClient(o.client), { token });
        if (res.status !== 200) throw new Error(`introspection endpoint: HTTP ${res.status}`);
        return (await res.json()) as Record<string, unknown>;
      },
      async rotateKeys(o = {}) {
        const before = await store.keys.signingKeys();
        const previousKid = (before.find((k) => k.status === 'current') ?? before[0])?.jwk.kid;
        const after = await store.keys.rotateSigningKeys(o.retireAfterSeconds ?? 3600);
        const currentKid = (after.find((k) => k.status === 'current') ?? after[0])?.jwk.kid;
        // The AS reads its signing keys once, when it is created: build a new one on the same
        // store and swap it in behind the same port (sessions, grants and clients survive).
        const next = await createAuthorizationServer(config);
        const old = as!;
        as = next;
        await old.close();
        return { previousKid, currentKid };
      },
      async registerClient(extra = {}) {
        if (!metadata.registration_endpoint) throw new Error('the AS advertises no registration_endpoint');
        const res = await fetch(metadata.registration_endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({
            client_name: 'mcp-auth-kit testing (DCR)',
            application_type: 'native',
            redirect_uris: [DEFAULT_REDIRECT],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
            ...extra,
          }),
        });
        const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
        if (res.status !== 201 || typeof body.client_id !== 'string') {
          throw new AuthorizationFlowError(
            `registration endpoint: HTTP ${res.status} ${String(body.error ?? '')}`.trim(),
            body.error as string | undefined,
          );
        }
        const redirectUris = body.redirect_uris as string[] | undefined;
        return {
          clientId: body.client_id,
          ...(typeof body.client_secret === 'string' && { clientSecret: body.client_secret }),
          redirectUri: redirectUris?.[0] ?? DEFAULT_REDIRECT,
          registration: body,
        };
      },
      async clientMetadataHost() {
        if (!certificate) throw new Error('CIMD support is off (cimd: false)');
        host ??= await startClientMetadataHost({ certificate });
        return host;
      },
      passwordOf(username) {
        const password = passwords.get(username.toLowerCase());
        if (password === undefined) throw new TypeError(`no user ${username}`);
        return password;
      },
      async close() {
        if (closed) return;
        closed = true;
        await host?.close();
        await listener?.close();
        await as?.close();
        await store.close();
      },
    };
    return handle;
  } catch (err) {
    await host?.close().catch(() => {});
    await listener?.close().catch(() => {});
    await as?.close().catch(() => {});
    await store.close().catch(() => {});
    throw err;
  }
}
