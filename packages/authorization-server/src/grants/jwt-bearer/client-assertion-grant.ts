/**
 * The RFC 7523 §2.1 JWT bearer grant with the client's own assertion (MCP client credentials
 * extension, "JWT Bearer Assertions (recommended)"): a machine client signs a short-lived JWT
 * (`iss` = `sub` = its client_id, `aud` this server, `exp`, `jti`) and gets an access token
 * for itself, as with `client_credentials` (RFC 6749 §4.4: no user, no refresh token, no Grant).
 * oidc-provider has authenticated the client before this handler runs — with its registered
 * method, or, for a request that carries only the assertion, with the assertion itself
 * (assertion-authenticates.ts). The handler then:
 *
 *  1. applies the `client_credentials` policy: configured clients only (`clients[]`), that
 *     authenticate, registered for the grant, with registered keys (`jwks` / `jwks_uri`);
 *  2. refuses a `dpop_bound_access_tokens` client without a proof before the assertion is used;
 *  3. verifies the assertion (client-assertion-verify.ts, every check of RFC 7523 §3);
 *  4. picks the resource (RFC 8707) and the scopes the client registered for it;
 *  5. binds the token to a DPoP proof's key (dpop-binding.ts) and issues it.
 *
 * Every decision is audited (`client_assertion.accepted` / `client_assertion.refused`).
 */
import { createHash } from 'node:crypto';
import { splitScope } from '@mcp-auth-kit/protocol';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { audit } from '../../ops/audit.js';
import type { FetchLike } from '../../clients/cimd.js';
import { RESOURCE_SCOPE_PROPERTY } from '../../clients/client-metadata-policy.js';
import type { Logger } from '../../ops/logger.js';
import type { ResourceRegistry } from '../../tokens/resources.js';
import type { KeyValueStore } from '../../storage/types.js';
import { GrantRefusal, providerError, refuse } from '../refusal.js';
import { createClientKeys, hasRegisteredKeys, type KeyedClient } from './client-keys.js';
import { CLIENT_ASSERTION_ALGORITHMS, verifyClientAssertion } from './client-assertion-verify.js';
import { JWT_BEARER_GRANT_TYPE } from './constants.js';
import { dpopBinding, requireProofOfBoundClient, type DpopBindingOptions } from './dpop-binding.js';

const REPLAY_NAMESPACE = 'client-assertion-jti';

export interface ClientAssertionGrantOptions {
  issuer: string;
  resources: ResourceRegistry;
  logger: Logger;
  kv: KeyValueStore;
  operatorClientIds: ReadonlySet<string>;
  /** Fetches a client's `jwks_uri` through the egress policy (provider-fetch.ts). */
  jwksUriFetch: FetchLike;
  dpop: DpopBindingOptions;
  /** How our access tokens are signed and how long they live (the provider's own settings). */
  signing: { alg: string; kid?: string | undefined };
  accessTokenTTL: number;
}

/** The client fields the handler reads (oidc-provider's Client instance). */
export interface AssertingClient extends KeyedClient {
  tokenEndpointAuthMethod?: string;
  tokenEndpointAuthSigningAlg?: string;
  grantTypes?: string[];
  dpopBoundAccessTokens?: boolean;
  [key: string]: unknown;
}

function checkClient(client: AssertingClient, options: ClientAssertionGrantOptions): void {
  if (!client.tokenEndpointAuthMethod || client.tokenEndpointAuthMethod === 'none')
    refuse('invalid_client', 'public_client', 'a public client cannot use the JWT bearer grant (RFC 6749 §4.4, RFC 7523 §3.1)');
  if (!options.operatorClientIds.has(client.clientId))
    refuse('unauthorized_client', 'client_source', 'only clients configured at this server may present their own assertions');
  if (!client.grantTypes?.includes(JWT_BEARER_GRANT_TYPE))
    refuse('unauthorized_client', 'grant_type', `the client is not registered for the ${JWT_BEARER_GRANT_TYPE} grant`);
  if (!hasRegisteredKeys(client))
    refuse('unauthorized_client', 'no_keys', 'the client has no registered keys (jwks or jwks_uri) to verify its assertions with');
}

function chooseResource(requested: unknown, resources: ResourceRegistry): string {
  const list = requested === undefined ? [] : Array.isArray(requested) ? requested : [requested];
  if (list.length > 1) refuse('invalid_target', 'resource', 'name exactly one resource (RFC 8707 §2)');
  const wanted = list[0] ?? resources.defaultResource;
  if (wanted === undefined)
    refuse('invalid_target', 'resource', 'resource parameter is required: this server protects several resources (RFC 8707 §2)');
  if (typeof wanted !== 'string' || !resources.get(wanted))
    refuse('invalid_target', 'resource', 'the requested resource is not a resource of this server (RFC 8707 §2)');
  return wanted as string;
}

/** RFC 6749 §3.3: what was asked, within the resource's scopes and the ones the client was configured with. */
function chooseScopes(requested: unknown, resource: string, client: AssertingClient, resources: ResourceRegistry): string[] {
  const scopes = splitScope(typeof requested === 'string' ? requested : undefined);
  const defined = new Set(Object.keys(resources.get(resource)?.scopes ?? {}));
  const registered = new Set(String(client[RESOURCE_SCOPE_PROPERTY] ?? '').split(' '));
  const refused = scopes.filter((s) => !defined.has(s) || !registered.has(s));
  if (refused.length) refuse('invalid_scope', 'scope', `this client may not hold: ${refused.join(' ')} (RFC 6749 §3.3)`);
  return scopes;
}

function replayGuard(kv: KeyValueStore) {
  return async (clientId: string, jti: string, ttlSeconds: number): Promise<boolean> => {
    const key = createHash('sha256').update(`${clientId}\u0000${jti}`).digest('base64url');
    return (await kv.increment(REPLAY_NAMESPACE, key, 1, ttlSeconds)) === 1;
  };
}

/** The handler of the client-assertion variant of the grant (grant.ts dispatches by `typ`). */
export function createClientAssertionGrant(provider: Provider, options: ClientAssertionGrantOptions) {
  const keysOf = createClientKeys(options.jwksUriFetch);
  const firstUse = replayGuard(options.kv);
  const tokenEndpoint = `${options.issuer}/token`;
  const { logger } = options;

  return async function clientAssertionGrant(ctx: KoaContextWithOIDC): Promise<void> {
    const client = ctx.oidc.client as unknown as AssertingClient;
    const params = ctx.oidc.params as Record<string, unknown>;
    try {
      checkClient(client, options);
      const proof = ctx.get('DPoP') || undefined;
      requireProofOfBoundClient(proof, client.dpopBoundAccessTokens, options.dpop);
      if (typeof params.assertion !== 'string' || !params.assertion)
        refuse('invalid_request', 'assertion', 'assertion is required (RFC 7521 §4.1)');
      const now = Math.floor(Date.now() / 1000);
      await verifyClientAssertion({
        assertion: params.assertion as string,
        clientId: client.clientId,
        issuer: options.issuer,
        tokenEndpoint,
        keys: keysOf(client)!,
        algorithms: client.tokenEndpointAuthSigningAlg ? [client.tokenEndpointAuthSigningAlg] : CLIENT_ASSERTION_ALGORITHMS,
        now,
        firstUse,
      });
      const resource = chooseResource(params.resource, options.resources);
      const scopes = chooseScopes(params.scope, resource, client, options.resources);
      const binding = await dpopBinding(proof, undefined, options.dpop, now);
      ctx.body = await issue(provider, ctx, client, resource, scopes, binding?.jkt, options);
      audit(logger, 'client_assertion.accepted', { client_id: client.clientId, resource, scope: scopes.join(' '), dpop: !!binding });
    } catch (err) {
      if (!(err instanceof GrantRefusal)) throw err;
      audit(logger, 'client_assertion.refused', { client_id: client.clientId, error: err.error, reason: err.reason });
      if (err.reason === 'jwks')
        logger.warn('client keys unavailable', { client_id: client.clientId, detail: (err.cause as Error | undefined)?.message });
      throw providerError(err);
    }
  };
}

/** Our RFC 9068 access token for the client itself, as oidc-provider's client_credentials grant makes it. */
async function issue(
  provider: Provider,
  ctx: KoaContextWithOIDC,
  client: AssertingClient,
  resource: string,
  scopes: string[],
  jkt: string | undefined,
  options: ClientAssertionGrantOptions,
): Promise<Record<string, unknown>> {
  const scope = scopes.join(' ') || undefined;
  const token = new provider.ClientCredentials({ client: client as never, scope } as never);
  const server = options.resources.get(resource)!;
  token.resourceServer = new provider.ResourceServer(resource, {
    scope: Object.keys(server.scopes).join(' '),
    audience: resource,
    accessTokenTTL: server.accessTokenTTL ?? options.accessTokenTTL,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: options.signing.alg, ...(options.signing.kid && { kid: options.signing.kid }) } },
  } as never);
  if (jkt) token.setThumbprint('jkt', jkt);
  ctx.oidc.entity('ClientCredentials', token);
  return {
    access_token: await token.save(),
    token_type: token.tokenType,
    expires_in: token.expiration,
    ...(scope && { scope }),
  };
}
