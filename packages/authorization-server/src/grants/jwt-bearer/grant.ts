/**
 * The RFC 7523 §2.1 JWT bearer grant for Identity Assertion JWT Authorization Grants (MCP
 * enterprise-managed authorization), on oidc-provider's public `registerGrantType`. oidc-provider
 * has parsed the request and authenticated the client before this handler runs; it then:
 *
 *  1. applies the client policy: a confidential client (draft §8.1, profile §7.7: client
 *     authentication is required), from a source the operator allows (configured clients
 *     always; DCR and CIMD clients only with `idJag.allowClients`), registered for the grant;
 *  2. verifies the assertion (verify.ts, every check in the draft's order);
 *  3. finds, links or creates the user's account (accounts.ts); a disabled account is refused;
 *  4. issues our usual RFC 9068 JWT access token for the resource, from the account's grant for
 *     the client (the remembered one, extended, else a new one that is remembered: so
 *     introspection, revocation, the account page and the admin tool see it like any other),
 *     and a refresh token only when the operator enabled it. A DPoP proof binds the access token to its key; when the ID-JAG names
 *     the key (`cnf.jkt`) the refresh token is bound to it too (dpop-binding.ts).
 *
 * Every decision is audited (`id_jag.accepted` / `id_jag.refused`; the token itself is audited
 * as `token.issued` by provider-events.ts).
 */
import { createHash } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { audit } from '../../ops/audit.js';
import type { Logger } from '../../ops/logger.js';
import type { ResourceRegistry } from '../../tokens/resources.js';
import type { KeyValueStore, Store } from '../../storage/types.js';
import { RESOURCE_SCOPE_PROPERTY, type MetadataSource } from '../../clients/client-metadata-policy.js';
import { isCimdClientId } from '../../clients/client-policy.js';
import { GrantPairBusy, RememberedGrants } from '../../interactions/remembered-grants.js';
import { resolveAccount } from './accounts.js';
import { dpopBinding, requireProofOfBoundClient, type DpopBinding } from './dpop-binding.js';
import type { ResolvedIdJagConfig } from '../../config/types.js';
import { trustedIdps } from './idp-keys.js';
import { IdJagRefusal, providerError, refuse } from './refusal.js';
import { handlerDecidesGrant } from '../handler-decides.js';
import { verifyIdJag, type VerifiedIdJag } from './verify.js';
import { ID_JAG_GRANT_PROFILE, JWT_BEARER_GRANT_TYPE } from './constants.js';
import { isIdJagTyped } from './assertion-typ.js';
import { installAssertionAuthentication } from './assertion-authenticates.js';
import { hasRegisteredKeys } from './client-keys.js';
import { createClientAssertionGrant, type AssertingClient, type ClientAssertionGrantOptions } from './client-assertion-grant.js';

const REPLAY_NAMESPACE = 'id-jag-jti';

export interface IdJagGrantOptions {
  config: ResolvedIdJagConfig;
  issuer: string;
  store: Store;
  resources: ResourceRegistry;
  logger: Logger;
  operatorClientIds: ReadonlySet<string>;
  /** DPoP as the provider has it (`dpop` config): proofs at this grant bind the token. */
  dpop: { enabled: boolean; requireNonce: boolean; algorithms: string[] };
  /** How our access tokens are signed and how long they live (the provider's own settings). */
  signing: { alg: string; kid?: string | undefined };
  accessTokenTTL: number;
}

/** The client fields the handler reads (oidc-provider's Client instance). */
interface GrantClient {
  clientId: string;
  tokenEndpointAuthMethod?: string;
  grantTypes?: string[];
  /** RFC 9449 §5.2 `dpop_bound_access_tokens`. */
  dpopBoundAccessTokens?: boolean;
  grantTypeAllowed(type: string): boolean;
  [key: string]: unknown;
}

/** The metadata sources `idJag.allowClients` opens the grant to (client-metadata-policy.ts). */
export function idJagSources(config: ResolvedIdJagConfig | undefined): ReadonlySet<MetadataSource> {
  const allow: readonly string[] = config ? config.allowClients : [];
  return new Set<MetadataSource>([
    ...(allow.includes('dynamic') ? (['registration', 'client_update', 'stored'] as const) : []),
    ...(allow.includes('cimd') ? (['cimd'] as const) : []),
  ]);
}

/** Whether the client may use the grant at all; the refusal otherwise. */
function checkClient(client: GrantClient, options: IdJagGrantOptions): void {
  if (!client.tokenEndpointAuthMethod || client.tokenEndpointAuthMethod === 'none') {
    refuse(
      'invalid_client',
      'public_client',
      'the JWT bearer grant needs client authentication: public clients cannot use it (draft §8.1)',
    );
  }
  const allow = new Set(options.config.allowClients);
  const operator = options.operatorClientIds.has(client.clientId);
  const cimd = !operator && isCimdClientId(client.clientId);
  if (!operator && !(cimd ? allow.has('cimd') : allow.has('dynamic'))) {
    refuse(
      'unauthorized_client',
      'client_source',
      `${cimd ? 'clients identified by a metadata document' : 'dynamically registered clients'} may not use the JWT bearer grant here`,
    );
  }
  if (!client.grantTypes?.includes(JWT_BEARER_GRANT_TYPE)) {
    refuse('unauthorized_client', 'grant_type', `the client is not registered for the ${JWT_BEARER_GRANT_TYPE} grant`);
  }
}

/** Count first (one atomic increment in the shared store): only the first presentation gets 1. */
function replayGuard(kv: KeyValueStore) {
  return async (issuer: string, jti: string, ttlSeconds: number): Promise<boolean> => {
    const key = createHash('sha256').update(`${issuer}\u0000${jti}`).digest('base64url');
    return (await kv.increment(REPLAY_NAMESPACE, key, 1, ttlSeconds)) === 1;
  };
}

async function issue(
  provider: Provider,
  ctx: KoaContextWithOIDC,
  client: GrantClient,
  accountId: string,
  verified: VerifiedIdJag,
  options: IdJagGrantOptions,
  binding: DpopBinding | undefined,
): Promise<Record<string, unknown>> {
  const scope = verified.scopes.join(' ') || undefined;
  // One grant per (account, client), like consent: the one already remembered is extended, so
  // repeated exchanges do not pile up grants, and the account page / admin tool list and revoke
  // every token of this client for this user at once (remembered-grants.ts).
  // Under the pair's lock: concurrent exchanges share one grant, none is left outside the index.
  const remembered = new RememberedGrants(provider, options.store);
  const { grant, grantId } = await remembered
    .exclusive(accountId, client.clientId, async () => {
      const grant = (await remembered.find(accountId, client.clientId)) ?? new provider.Grant({ accountId, clientId: client.clientId });
      if (scope) grant.addResourceScope(verified.resource, scope);
      const grantId = await grant.save();
      await remembered.remember(accountId, client.clientId, grantId);
      return { grant, grantId };
    })
    .catch((err: unknown) =>
      err instanceof GrantPairBusy
        ? refuse(
            'temporarily_unavailable',
            'grant_busy',
            'another request is issuing tokens for this user and client: retry with a new ID-JAG',
          )
        : Promise.reject(err),
    );

  const resource = options.resources.get(verified.resource)!;
  const at = new provider.AccessToken({
    accountId,
    client: client as never,
    grantId,
    gty: JWT_BEARER_GRANT_TYPE,
    scope,
  } as never);
  at.resourceServer = new provider.ResourceServer(verified.resource, {
    scope: Object.keys(resource.scopes).join(' '),
    audience: verified.resource,
    accessTokenTTL: resource.accessTokenTTL ?? options.accessTokenTTL,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: options.signing.alg, ...(options.signing.kid && { kid: options.signing.kid }) } },
  } as never);
  if (binding) at.setThumbprint('jkt', binding.jkt);
  ctx.oidc.entity('AccessToken', at);
  ctx.oidc.entity('Grant', grant);
  const body: Record<string, unknown> = {
    access_token: await at.save(),
    token_type: at.tokenType,
    expires_in: at.expiration,
    ...(scope && { scope }),
  };
  if (options.config.refreshTokens && client.grantTypeAllowed('refresh_token')) {
    const rt = new provider.RefreshToken({
      accountId,
      client: client as never,
      grantId,
      gty: JWT_BEARER_GRANT_TYPE,
      scope,
      resource: verified.resource,
      expiresWithSession: false,
      rotations: 0,
      // oidc-provider's refresh_token grant then demands a proof by this key (and keeps it on rotation).
      ...(binding?.bindsRefreshToken && { jkt: binding.jkt }),
    } as never);
    ctx.oidc.entity('RefreshToken', rt);
    body.refresh_token = await rt.save();
  }
  return body;
}

/** The handler of the ID-JAG variant of the grant (the dispatcher below picks it by `typ`). */
function createIdJagGrant(provider: Provider, options: IdJagGrantOptions) {
  const idps = trustedIdps(options.config.trustedIdps, options.logger);
  const firstUse = replayGuard(options.store.kv);
  const dpopOptions = { ...options.dpop, tokenEndpoint: `${options.issuer}/token`, kv: options.store.kv };
  const { logger } = options;

  return async function idJagGrant(ctx: KoaContextWithOIDC): Promise<void> {
    const client = ctx.oidc.client as unknown as GrantClient;
    const params = ctx.oidc.params as Record<string, unknown>;
    let idp: string | undefined;
    try {
      checkClient(client, options);
      const proof = ctx.get('DPoP') || undefined;
      requireProofOfBoundClient(proof, client.dpopBoundAccessTokens, dpopOptions);
      if (typeof params.assertion !== 'string' || !params.assertion)
        refuse('invalid_request', 'assertion', 'assertion is required (RFC 7521 §4.1)');
      const limit = client[RESOURCE_SCOPE_PROPERTY];
      const verified = await verifyIdJag({
        assertion: params.assertion as string,
        clientId: client.clientId,
        issuer: options.issuer,
        idps,
        resources: options.resources,
        requestedResource: params.resource as string | string[] | undefined,
        requestedScope: typeof params.scope === 'string' ? params.scope : undefined,
        clientScopes: typeof limit === 'string' ? new Set(limit.split(' ')) : undefined,
        now: Math.floor(Date.now() / 1000),
        clockTolerance: options.config.clockToleranceSeconds,
        maxAge: options.config.maxAgeSeconds,
        firstUse,
      });
      idp = verified.idp.name;
      const binding = await dpopBinding(proof, verified.claims.cnf, dpopOptions, Math.floor(Date.now() / 1000));
      const { account, via } = await resolveAccount(options.store, verified.idp, verified.claims);
      if (via === 'created') audit(logger, 'account.created', { account: account.id, via: 'id-jag', idp });
      if (via === 'email' && !account.disabled) audit(logger, 'account.updated', { account: account.id, linked: 'id-jag', idp });
      if (account.disabled) refuse('invalid_grant', 'account_disabled', "the user's account at this server is disabled");
      ctx.body = await issue(provider, ctx, client, account.id, verified, options, binding);
      audit(logger, 'id_jag.accepted', {
        client_id: client.clientId,
        idp,
        account: account.id,
        via,
        resource: verified.resource,
        scope: verified.scopes.join(' '),
        dpop: !!binding,
      });
    } catch (err) {
      if (!(err instanceof IdJagRefusal)) throw err;
      audit(logger, 'id_jag.refused', { client_id: client.clientId, idp, error: err.error, reason: err.reason });
      if (err.reason === 'jwks') {
        logger.warn('ID-JAG keys unavailable', { idp, detail: (err.cause as Error | undefined)?.message });
      }
      throw providerError(err);
    }
  };
}

export interface JwtBearerGrantOptions {
  /** The ID-JAG variant (enterprise-managed authorization); off when absent. */
  idJag?: IdJagGrantOptions | undefined;
  /** The client-assertion variant (client credentials extension, RFC 7523 §2.1): for configured clients with keys. */
  clientAssertion: ClientAssertionGrantOptions;
}

/**
 * Registers the RFC 7523 §2.1 grant and advertises it (RFC 8414 `grant_types_supported`, draft
 * §7.2). One grant type, two kinds of assertion, told apart by `typ` (assertion-typ.ts): an
 * ID-JAG goes to the ID-JAG checks; any other assertion is the client's own when the client
 * registered keys (or ID-JAGs are off), else it goes to the ID-JAG checks too, which refuse it for
 * its `typ`. Neither path accepts the other's assertions.
 */
export function installJwtBearerGrant(provider: Provider, options: JwtBearerGrantOptions): void {
  const idJagGrant = options.idJag ? createIdJagGrant(provider, options.idJag) : undefined;
  const assertionGrant = createClientAssertionGrant(provider, options.clientAssertion);

  async function jwtBearerGrant(ctx: KoaContextWithOIDC): Promise<void> {
    const assertion = (ctx.oidc.params as Record<string, unknown>).assertion;
    const client = ctx.oidc.client as unknown as AssertingClient;
    const idJagTyped = isIdJagTyped(assertion);
    if (!idJagTyped && (!idJagGrant || hasRegisteredKeys(client))) return assertionGrant(ctx);
    if (idJagGrant) return idJagGrant(ctx);
    audit(options.clientAssertion.logger, 'id_jag.refused', { client_id: client.clientId, error: 'invalid_grant', reason: 'id_jag_off' });
    throw providerError(
      new IdJagRefusal(
        'invalid_grant',
        'this server accepts no ID-JAGs (enterprise-managed authorization is not configured)',
        'id_jag_off',
      ),
    );
  }

  provider.registerGrantType(JWT_BEARER_GRANT_TYPE, jwtBearerGrant as never, ['assertion', 'scope', 'resource'], ['resource']);
  // The handlers apply oidc-provider's grant_types rule, and more, with unauthorized_client.
  handlerDecidesGrant(provider, JWT_BEARER_GRANT_TYPE);
  // A request with the client's assertion alone is authenticated by it (assertion-authenticates.ts).
  installAssertionAuthentication(provider);
  if (options.idJag) advertiseIdJagProfile(provider);
}

function advertiseIdJagProfile(provider: Provider): void {
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') {
      const body = ctx.body as Record<string, unknown>;
      const profiles = Array.isArray(body.authorization_grant_profiles_supported) ? body.authorization_grant_profiles_supported : [];
      body.authorization_grant_profiles_supported = [...new Set([...profiles, ID_JAG_GRANT_PROFILE])];
    }
  });
}
