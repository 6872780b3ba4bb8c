/** Builds the oidc-provider instance with the MCP authorization rules. */
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { ResolvedConfig } from '../config/types.js';
import { DEFAULTS } from '../config/defaults.js';
import type { Store } from '../storage/types.js';
import { shownAccountName } from '../accounts/account-name.js';
import type { Logger } from '../ops/logger.js';
import { ResourceRegistry } from '../tokens/resources.js';
import { createClientPolicy, RESOURCE_SCOPE_PROPERTY, restrictUserlessGrants } from '../clients/client-policy.js';
import { DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD } from '../clients/client-metadata-policy.js';
import { createInteractionPolicy } from './interaction-policy.js';
import { cimdRefusal, createCimdFetch, type FetchLike } from '../clients/cimd.js';
import { createJwksUriFetch, createProviderFetch } from './provider-fetch.js';
import { escapeHtml, page } from '../http/html.js';
import { looksNative } from '../http/urls.js';
import type { StoredSigningKey } from '../storage/types.js';
import { dpopProviderOptions } from '../tokens/dpop.js';
import { installDpopProofShape } from '../tokens/dpop-proof-shape.js';
import { auditProviderEvents, logProviderErrors } from './provider-events.js';
import type { AsMetrics } from '../ops/metrics.js';
import { meteredCimdFetch } from '../ops/cimd-metrics.js';
import { createIntrospectionPolicy, revocationAllowed } from '../ops/token-policies.js';
import { grantClaim, installJwtIntrospection } from '../tokens/jwt-introspection.js';
import { refreshGraceCheckpoint } from '../tokens/refresh-grace.js';
import { usableAccount } from '../accounts/account-state.js';
import { idJagSources, installJwtBearerGrant } from '../grants/jwt-bearer/index.js';
import { forwardedHops, trustProxySetting } from '../http/client-address.js';
import { installTokenExchangeGrant } from '../grants/token-exchange/index.js';
import { createOwnAccessTokenVerifier } from '../tokens/own-access-tokens.js';
import type { ThirdParty } from '../third-party/service.js';
import { connectSignInClient, isConnectSignIn } from '../third-party/sign-in.js';
import { consoleSignInClient, isConsoleSignIn } from '../admin/sign-in.js';

export { ID_TOKEN_TTL } from '../config/defaults.js';
import { ID_TOKEN_TTL } from '../config/defaults.js';
/** Seconds an access token lives when neither the server nor its resource sets `accessTokenTTL`. */
export const DEFAULT_ACCESS_TOKEN_TTL = DEFAULTS.accessTokenTTL;

export const OIDC_SCOPES = ['openid', 'offline_access', 'profile'];

/** @internal */
export interface ProviderParts {
  provider: Provider;
  resources: ResourceRegistry;
  /** Path of the issuer ("" for a path-less issuer). */
  mountPath: string;
}

/**
 * RFC 8414 §3.3: the metadata's endpoint URLs are on the issuer's origin. oidc-provider builds
 * them from the request (`Host`, or `X-Forwarded-Host` with trustProxy); a forged header must
 * not be able to point clients — or a shared cache — at another host.
 */
export function pinEndpointsToIssuer(body: Record<string, unknown>, issuer: URL): void {
  const pin = (value: unknown): unknown => {
    if (typeof value !== 'string' || !/^https?:\/\//.test(value)) return value;
    const url = new URL(value);
    return `${issuer.origin}${url.pathname}${url.search}`;
  };
  for (const [key, value] of Object.entries(body)) {
    if (key.endsWith('_endpoint') || key === 'jwks_uri') body[key] = pin(value);
  }
  const aliases = body.mtls_endpoint_aliases;
  if (aliases && typeof aliases === 'object') {
    for (const [key, value] of Object.entries(aliases as Record<string, unknown>)) (aliases as Record<string, unknown>)[key] = pin(value);
  }
}

/** The signing keys in the order oidc-provider needs, and the cookie keys. */
async function loadKeys(store: Store) {
  const signingKeys = await store.keys.signingKeys();
  const current = signingKeys.find((k) => k.status === 'current') ?? signingKeys[0];
  if (!current) throw new Error('the key store returned no signing key');
  // Order matters: oidc-provider signs with the first key matching the algorithm.
  const ordered: StoredSigningKey[] = [current, ...signingKeys.filter((k) => k !== current)];
  // Keys the store generates carry their `alg`; one without it is the store's default kind, ES256.
  const signing = { alg: (current.jwk.alg as string | undefined) ?? 'ES256', kid: current.jwk.kid as string | undefined };
  return { ordered, signing, cookieKeys: await store.keys.cookieKeys() };
}

type Signing = { alg: string; kid: string | undefined };

/** RFC 8707 resource indicators: which resource a token is for, its scopes, lifetime and format. */
function resourceIndicatorsFeature(resources: ResourceRegistry, accessTokenTTL: number, signing: Signing) {
  return {
    enabled: true,
    defaultResource: async (ctx: KoaContextWithOIDC, client: { clientId?: string } | undefined, oneOf?: string[]) => {
      if (oneOf) return oneOf.length === 1 ? oneOf[0]! : oneOf;
      // A connect page's sign-in (third-party/sign-in.ts) is for no resource: it never gets a token.
      if (isConnectSignIn({ client_id: client?.clientId }) || isConsoleSignIn({ client_id: client?.clientId }))
        return undefined as unknown as string;
      if (resources.defaultResource) return resources.defaultResource;
      // MCP clients MUST send `resource`; with several resources there is no safe default.
      if (ctx.oidc.route === 'authorization' || ctx.oidc.route === 'pushed_authorization_request') {
        throw new errors.InvalidTarget('resource parameter is required: this server protects several resources');
      }
      return undefined as unknown as string;
    },
    useGrantedResource: async () => true,
    getResourceServerInfo: async (ctx: KoaContextWithOIDC, indicator: string, client: { [k: string]: unknown }) => {
      const resource = resources.get(indicator);
      if (!resource) throw new errors.InvalidTarget();
      let scopes = Object.keys(resource.scopes);
      if (ctx.oidc.params?.grant_type === 'client_credentials') {
        // Machine clients only get the resource scopes they were registered with.
        const registered = new Set(String(client[RESOURCE_SCOPE_PROPERTY] ?? '').split(' '));
        scopes = scopes.filter((s) => registered.has(s));
      }
      return {
        scope: scopes.join(' '),
        audience: indicator,
        accessTokenTTL: resource.accessTokenTTL ?? accessTokenTTL,
        accessTokenFormat: 'jwt',
        jwt: { sign: signing },
      };
    },
  };
}

/** Client ID Metadata Documents: which URLs may be fetched and which such clients admitted. */
function cimdFeature(cimd: ResolvedConfig['cimd'], logger: Logger, metrics: AsMetrics | undefined) {
  return {
    enabled: cimd.enabled,
    ack: 'draft-02',
    allowFetch: async (_ctx: KoaContextWithOIDC, clientId: string) => {
      const refusal = cimdRefusal(clientId, cimd);
      if (refusal) {
        metrics?.cimdFetch('refused');
        logger.warn('client_id metadata document refused', { client_id: clientId, reason: refusal });
      }
      return !refusal;
    },
    allowClient: async (_ctx: KoaContextWithOIDC, client: { clientId: string }) => !cimdRefusal(client.clientId, cimd),
    // The lifetime comes from cacheSeconds (cimd.ts), passed on as max-age: no floor here, or a
    // no-store document would still be kept 30 s in memory.
    cacheDuration: { min: 0, max: 3600 },
  };
}

/** oidc-provider's features: what is on, with which policy. */
function features(config: ResolvedConfig, parts: FeatureParts) {
  const { registration } = config;
  return {
    devInteractions: { enabled: false },
    // RFC 9449: cnf.jkt-bound access tokens, bound refresh tokens for public clients, nonces
    dPoP: parts.dpop.feature,
    rpInitiatedLogout: { enabled: false },
    revocation: { enabled: true, allowedPolicy: revocationAllowed },
    introspection: { enabled: true, allowedPolicy: parts.introspectionAllowed },
    clientCredentials: { enabled: true },
    registration: { enabled: registration.enabled, initialAccessToken: registration.initialAccessToken ?? false },
    registrationManagement: { enabled: registration.enabled && registration.management, rotateRegistrationAccessToken: true },
    resourceIndicators: resourceIndicatorsFeature(parts.resources, config.accessTokenTTL, parts.signing),
    clientIdMetadataDocument: cimdFeature(config.cimd, parts.logger, parts.metrics),
  } as unknown as Configuration['features'];
}

interface FeatureParts {
  resources: ResourceRegistry;
  signing: Signing;
  dpop: ReturnType<typeof dpopProviderOptions>;
  introspectionAllowed: ReturnType<typeof createIntrospectionPolicy>;
  logger: Logger;
  metrics: AsMetrics | undefined;
}

/** Token and session lifetimes, and when refresh tokens are issued and rotated. */
function tokenLifetimes(config: ResolvedConfig): Partial<Configuration> {
  const { accessTokenTTL } = config;
  const refresh = config.refreshTokens;
  return {
    ttl: {
      AccessToken: (_ctx: KoaContextWithOIDC, token: { resourceServer?: { accessTokenTTL?: number } }) =>
        token.resourceServer?.accessTokenTTL ?? accessTokenTTL,
      ClientCredentials: (_ctx: KoaContextWithOIDC, token: { resourceServer?: { accessTokenTTL?: number } }) =>
        token.resourceServer?.accessTokenTTL ?? accessTokenTTL,
      AuthorizationCode: 60,
      IdToken: ID_TOKEN_TTL,
      Interaction: 600,
      Session: config.sessionTTL,
      Grant: refresh.ttl,
      RefreshToken: refresh.ttl,
    } as Configuration['ttl'],
    // oidc-provider issues refresh tokens only for offline_access by default: MCP clients rarely ask for offline_access; the `refresh_token` grant in the
    // client's registration is what decides. Refresh tokens outlive the browser session.
    expiresWithSession: async () => false,
    issueRefreshToken: async (_ctx, client) => refresh.enabled && client.grantTypeAllowed('refresh_token'),
    // MCP security §Token theft / OAuth 2.1 §4.3.1: rotate on every use; oidc-provider revokes the
    // whole grant when a rotated (consumed) refresh token is presented again.
    rotateRefreshToken: () => true,
  };
}

/**
 * Accounts: a disabled or deleted account has no live tokens, nor has a demo account on a
 * production server (seeded into a shared store after start-up); introspection uses the same rule.
 */
function findAccount(store: Store, server: { production: boolean }): Configuration['findAccount'] {
  return async (ctx: KoaContextWithOIDC, sub: string, token?: unknown) => {
    const account = await usableAccount(store, sub, server);
    if (!account) return undefined;
    // A refresh passes here after oidc-provider's checks and before its rotation (refresh-grace.ts).
    await refreshGraceCheckpoint(ctx, token);
    return {
      accountId: account.id,
      async claims() {
        return { sub: account.id, preferred_username: account.username, name: shownAccountName(account) };
      },
    };
  };
}

/** oidc-provider's error page, with our CSP and style sheet. */
function renderError(mountPath: string): Configuration['renderError'] {
  return async (ctx, out) => {
    ctx.type = 'html';
    ctx.set('cache-control', 'no-store');
    ctx.set('content-security-policy', "default-src 'none'; style-src 'self'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'");
    ctx.body = page(
      'Authorization error',
      `<h1>Authorization error</h1><p class="error"><code>${escapeHtml(out.error)}</code>${
        out.error_description ? ` — ${escapeHtml(out.error_description)}` : ''
      }</p><p>You can close this window and return to the application.</p>`,
      `${mountPath}/interaction/assets/style.css`,
    );
  };
}

/** Client metadata: pre-registered clients, defaults and the policy every registration passes. */
function clientOptions(config: ResolvedConfig, clientPolicy: ReturnType<typeof createClientPolicy>, signingAlg: string) {
  // `resource` (the MCP server a client is) is ours, not client metadata: the token exchange reads it.
  const clients = config.clients.map(({ resource: _resource, ...c }) =>
    // Same inference as for DCR and CIMD: all-loopback / custom-scheme clients are native.
    c.application_type === undefined && Array.isArray(c.redirect_uris) && looksNative(c.redirect_uris, config.redirectUris)
      ? { ...c, application_type: 'native' }
      : c,
  );
  return {
    // The connect pages sign in through the login page with the AS's own client (third-party/sign-in.ts).
    // The console signs in the same way with a client of its own (admin/sign-in.ts).
    clients: [
      ...clients,
      ...(config.thirdParty ? [connectSignInClient(config.issuer)] : []),
      ...(config.console ? [consoleSignInClient(config.issuer, config.console.path)] : []),
    ],
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD,
      id_token_signed_response_alg: signingAlg,
      // Left undefined so the client policy can tell "omitted" from "web" (oidc-provider defaults application_type to web, and only native clients get any-port loopback).
      application_type: undefined,
    } as Configuration['clientDefaults'],
    extraClientMetadata: {
      properties: [RESOURCE_SCOPE_PROPERTY],
      validator: clientPolicy as unknown as NonNullable<Configuration['extraClientMetadata']>['validator'],
    },
    // No pairwise subjects, so no sector_identifier_uri fetch ever (client-url-fields.ts refuses the field).
    sectorIdentifierUriValidate: () => false,
  } as Partial<Configuration>;
}

/** RFC 8414 §2 scopes_supported and §3.3 endpoint URLs on the issuer's origin, in the discovery document. */
function installDiscoveryRules(provider: Provider, resources: ResourceRegistry, issuerUrl: URL): void {
  // The resource scopes stay out of oidc-provider's static list, which it would turn into an allowlist for clients.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') {
      const body = ctx.body as Record<string, unknown>;
      body.scopes_supported = [...OIDC_SCOPES, ...resources.allScopes];
      pinEndpointsToIssuer(body, issuerUrl);
    }
  });
}

interface RuleParts {
  store: Store;
  resources: ResourceRegistry;
  logger: Logger;
  metrics: AsMetrics | undefined;
  operatorClientIds: Set<string>;
  signing: Signing;
  ordered: StoredSigningKey[];
  dpop: ReturnType<typeof dpopProviderOptions>;
  introspectionAllowed: ReturnType<typeof createIntrospectionPolicy>;
  issuerUrl: URL;
  thirdParty: ThirdParty | undefined;
  jwksUriFetch: FetchLike;
}

/** What oidc-provider's options cannot say: middleware, grants and event handlers on the built provider. */
function installRules(provider: Provider, config: ResolvedConfig, p: RuleParts): void {
  const { store, resources, logger, metrics, operatorClientIds, signing } = p;
  installDpopProofShape(provider);
  restrictUserlessGrants(provider, operatorClientIds);
  // RFC 7523 §2.1 JWT bearer grant (grants/jwt-bearer/): a configured client's own assertion
  // (MCP client credentials) and, when configured, ID-JAGs (MCP enterprise-managed authorization).
  const { accessTokenTTL } = config;
  const dpop = { enabled: config.dpop.enabled, requireNonce: config.dpop.requireNonce, algorithms: p.dpop.algorithms };
  installJwtBearerGrant(provider, {
    idJag: config.idJag && {
      config: config.idJag,
      issuer: config.issuer,
      store,
      resources,
      logger,
      operatorClientIds,
      accessTokenTTL,
      signing,
      dpop,
    },
    clientAssertion: {
      issuer: config.issuer,
      resources,
      logger,
      kv: store.kv,
      operatorClientIds,
      jwksUriFetch: p.jwksUriFetch,
      dpop: { ...dpop, tokenEndpoint: `${config.issuer}/token`, kv: store.kv },
      signing,
      accessTokenTTL,
    },
  });
  // Third-party authorization: RFC 8693 token exchange for provider tokens (grants/token-exchange/).
  if (p.thirdParty) {
    installTokenExchangeGrant(provider, {
      issuer: config.issuer,
      store,
      logger,
      production: config.production,
      thirdParty: p.thirdParty,
      verify: createOwnAccessTokenVerifier(
        config.issuer,
        p.ordered.map((k) => k.jwk),
      ),
    });
  }
  installDiscoveryRules(provider, resources, p.issuerUrl);
  installJwtIntrospection(provider, {
    issuer: config.issuer,
    signingKeys: p.ordered.map((k) => k.jwk),
    allowed: p.introspectionAllowed,
    logger,
  });
  logProviderErrors(provider, logger, metrics);
  auditProviderEvents(provider, logger, metrics);
}

/** oidc-provider's options: storage, clients, keys, cookies, scopes, PKCE, interactions, features, fetchers. */
function providerConfiguration(
  config: ResolvedConfig,
  p: RuleParts,
  more: { mountPath: string; cookieKeys: string[]; clientPolicy: ReturnType<typeof createClientPolicy> },
): Configuration {
  const { store, resources, logger, metrics, signing, ordered, dpop, introspectionAllowed, jwksUriFetch } = p;
  const { mountPath, cookieKeys, clientPolicy } = more;
  const { cimd } = config;
  return {
    adapter: ((name: string) => store.adapter(name)) as unknown as Configuration['adapter'],
    ...clientOptions(config, clientPolicy, signing.alg),
    jwks: { keys: ordered.map((k) => k.jwk) } as Configuration['jwks'],
    enabledJWA: { dPoPSigningAlgValues: dpop.algorithms } as Configuration['enabledJWA'],
    cookies: {
      keys: cookieKeys,
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    scopes: OIDC_SCOPES,
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'] },
    // OAuth 2.1 §4.1.1 / MCP security §PKCE: every client, S256 only (v9 refuses `plain`).
    pkce: { required: () => true },
    // OAuth 2.1 §10.1 removes the implicit grant: no token ever travels in a front-channel
    // URL, so the only response type is `code` (DCR of anything else is refused).
    responseTypes: ['code'],
    findAccount: findAccount(store, config),
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `${mountPath}/interaction/${interaction.uid}`,
      policy: createInteractionPolicy(),
    },
    ...tokenLifetimes(config),
    // Lets introspection find a JWT access token's grant, and so see it revoked (jwt-introspection.ts).
    extraTokenClaims: async (_ctx, token) => grantClaim(token as { kind?: string; grantId?: string }),
    features: features(config, { resources, signing, dpop, introspectionAllowed, logger, metrics }),
    // One fetcher per purpose (provider-fetch.ts): only the CIMD fetcher reads or writes the CIMD cache.
    fetch: createProviderFetch(
      {
        client_metadata: metrics
          ? meteredCimdFetch((kv) => createCimdFetch(cimd, logger, kv, config.redirectUris), store.kv, metrics)
          : createCimdFetch(cimd, logger, store.kv, config.redirectUris),
        jwks_uri: jwksUriFetch,
      },
      logger,
    ) as unknown as Configuration['fetch'],
    renderError: renderError(mountPath),
  } as Configuration;
}

/** @internal */
export async function buildProvider(
  config: ResolvedConfig,
  store: Store,
  logger: Logger,
  metrics?: AsMetrics,
  thirdParty?: ThirdParty,
): Promise<ProviderParts> {
  const resources = new ResourceRegistry(config.resources);
  const issuerUrl = new URL(config.issuer);
  const mountPath = issuerUrl.pathname === '/' ? '' : issuerUrl.pathname.replace(/\/$/, '');
  const { ordered, signing, cookieKeys } = await loadKeys(store);
  const { cimd } = config;
  const dpop = dpopProviderOptions(config.dpop, cookieKeys);

  const operatorClientIds = new Set(config.clients.map((c) => c.client_id));
  // One fetcher of clients' jwks_uri: oidc-provider's private_key_jwt and the client-assertion grant.
  const jwksUriFetch = createJwksUriFetch(cimd, logger);
  // the same rule as findAccount: a disabled or deleted account has no live tokens
  const introspectionAllowed = createIntrospectionPolicy(
    resources,
    operatorClientIds,
    async (accountId) => (await usableAccount(store, accountId, config)) !== undefined,
  );
  const clientPolicy = createClientPolicy({
    resources,
    clientSecretTTL: config.registration.clientSecretTTL,
    operatorClientIds,
    redirectUris: config.redirectUris,
    metadataPolicy: { jwtBearerSources: idJagSources(config.idJag) },
  });

  const parts: RuleParts = {
    store,
    resources,
    logger,
    metrics,
    operatorClientIds,
    signing,
    ordered,
    dpop,
    introspectionAllowed,
    issuerUrl,
    thirdParty,
    jwksUriFetch,
  };
  const provider = new Provider(config.issuer, providerConfiguration(config, parts, { mountPath, cookieKeys, clientPolicy }));
  provider.proxy = trustProxySetting(config.trustProxy) !== false;
  // koa reads X-Forwarded-For from the right, as many entries as there are trusted hops.
  provider.maxIpsCount = forwardedHops(config.trustProxy);
  installRules(provider, config, parts);

  return { provider, resources, mountPath };
}
