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
} from '@mcp-auth-kit/authorization-server';
import { fetchAsEndpoints, runCodeFlow, tokenRequest, type TokenResponse } from './code-flow.js';
import { decodeAccessToken } from './jwt.js';
import { startLoopbackServer, type LoopbackServer } from './loopback-server.js';
import { createLoopbackCertificate, type LoopbackCertificate } from './loopback-certificate.js';
import { startClientMetadataHost, type ClientMetadataHost } from './client-metadata-host.js';
import { loginHintHandler } from './login-hint.js';
import { createTestAccounts } from './test-accounts.js';
import { DEFAULT_REDIRECT, KIT_CLIENT, KIT_CLIENT_ID, registerTestClient, resolveClient } from './test-clients.js';
import { createTokenMinter } from './token-lifetime.js';
import { introspectToken, revokeToken } from './token-operations.js';
import type {
  AuthorizeOptions,
  IssuedTokens,
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

function toResourceConfigs(resources: StartTestAuthorizationServerOptions['resources']): ResourceConfig[] {
  return Object.entries(resources ?? {}).map(([resource, scopes]) => ({
    resource,
    scopes: Array.isArray(scopes) ? Object.fromEntries(scopes.map((s: string) => [s, s])) : { ...(scopes as Record<string, string>) },
  }));
}

export async function startTestAuthorizationServer(options: StartTestAuthorizationServerOptions): Promise<TestAuthorizationServer> {
  const resources = toResourceConfigs(options.resources);
  const users: TestUser[] = (options.users?.length ? options.users : ['test-user']).map((u) =>
    typeof u === 'string' ? { username: u } : { ...u },
  );
  const autoLogin = options.autoLogin ?? true;
  const defaultUser = typeof autoLogin === 'string' ? autoLogin : users[0]!.username;
  const certificate: LoopbackCertificate | undefined = options.cimd === false ? undefined : await createLoopbackCertificate();

  const store = await openStore({ kind: 'memory' });
  let listener: LoopbackServer | undefined;
  let as: AuthorizationServer | undefined;
  let host: ClientMetadataHost | undefined;
  try {
    // Accounts are created here so that `sub` is the username (readable test expectations).
    const accounts = await createTestAccounts(store, users);

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
      clients: [KIT_CLIENT, ...(options.clients ?? [])],
      ...options.config,
    };

    as = await createAuthorizationServer(config);
    const front = express();
    front.disable('x-powered-by');
    if (autoLogin !== false) {
      const hintedLogin = loginHintHandler(() => as!, store);
      front.get('/interaction/:uid', (req, res, next) => void hintedLogin(req, res, next));
    }
    front.use((req, res, next) => as!.app(req, res, next));
    listener.handle(front);

    const metadata = await fetchAsEndpoints(issuer);
    const mintWith = createTokenMinter();
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
    const withClaims = (tokens: TokenResponse): IssuedTokens => ({ ...tokens, claims: decodeAccessToken(tokens.access_token).claims });

    async function authorize(o: AuthorizeOptions = {}): Promise<IssuedTokens> {
      const resource = resolveResource(o.resource);
      const client = resolveClient(o.client);
      const subject = o.subject ?? defaultUser;
      if (o.lifetime !== undefined && !(Number.isSafeInteger(o.lifetime) && o.lifetime > 0)) {
        throw new TypeError('lifetime must be a positive integer (seconds)');
      }
      await accounts.ensure(subject);
      const tokens = withClaims(
        await runCodeFlow({
          endpoints: metadata,
          clientId: client.clientId,
          clientSecret: client.clientSecret,
          redirectUri: client.redirectUri,
          resource: resource.resource,
          scope: (o.scopes ?? Object.keys(resource.scopes)).join(' '),
          loginHint: subject,
          credentials: { username: subject, password: accounts.password(subject) ?? '' },
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
      revoke: (token, o = {}) => revokeToken(metadata, resolveClient(o.client), token, o.hint),
      introspect: (token, o = {}) => introspectToken(metadata, resolveClient(o.client), token),
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
      registerClient: (extra = {}) => registerTestClient(metadata, extra),
      async clientMetadataHost() {
        if (!certificate) throw new Error('CIMD support is off (cimd: false)');
        host ??= await startClientMetadataHost({ certificate });
        return host;
      },
      passwordOf(username) {
        const password = accounts.password(username);
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
