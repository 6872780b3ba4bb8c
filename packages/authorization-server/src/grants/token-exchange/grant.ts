/**
 * The RFC 8693 token exchange grant for third-party tokens, on oidc-provider's public
 * `registerGrantType`. An MCP server that received one of our access tokens presents it as the
 * `subject_token` and names a provider as the `audience`; the answer is that user's token at the
 * provider, from the vault (refreshed first if it expired), never one of ours. oidc-provider has
 * parsed the request and authenticated the client before this handler runs; then, in order:
 *
 *  1. the client: confidential (RFC 8693 §2.1), and an MCP server of this AS (a configured client
 *     with `resource`) — else `invalid_client` / `unauthorized_client`;
 *  2. no DPoP proof: the provider's token cannot be bound to the caller's key (RFC 9449 §5), so a
 *     proof is refused (`invalid_request`) rather than answered with a token the caller takes for
 *     bound; the subject token's own binding: subject-token.ts;
 *  3. the parameters (RFC 8693 §2.1): `subject_token`, `subject_token_type` = access token, one
 *     `audience`; no `actor_token` (no delegation), no `resource`, `requested_token_type` absent or
 *     access token — else `invalid_request` / `invalid_target`;
 *  4. the provider: configured, and one the caller's resource may use — else `invalid_target`;
 *  5. the subject token (subject-token.ts) — else `invalid_grant`;
 *  6. the connection: none, unreadable, or ended → `interaction_required` with the connect URL,
 *     a ticket bound to (sub, provider, resource) (tickets.ts); `scope` beyond what the provider
 *     granted → `invalid_scope`; the provider unreachable while refreshing → `temporarily_unavailable`.
 *
 * No Grant or token of ours is created: the grant index (remembered-grants.ts) has nothing to
 * list, the connection itself is listed and ended on the account page. Every decision is audited
 * (`third_party.token_exchanged`, `third_party.refused`) without a token value.
 */
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { splitScope } from '@mcp-auth-kit/protocol';
import { audit } from '../../ops/audit.js';
import type { Logger } from '../../ops/logger.js';
import type { OwnAccessToken } from '../../tokens/own-access-tokens.js';
import type { Store } from '../../storage/types.js';
import { ProviderUnavailable, type ThirdParty } from '../../third-party/service.js';
import type { ResolvedProvider } from '../../third-party/providers.js';
import { handlerDecidesGrant } from '../handler-decides.js';
import { extraMembers, GrantRefusal, providerError, refuse } from '../refusal.js';
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT_TYPE } from './constants.js';
import { subjectAccount } from './subject-token.js';

export interface TokenExchangeOptions {
  issuer: string;
  store: Store;
  logger: Logger;
  production: boolean;
  thirdParty: ThirdParty;
  /** Verifies one of our access tokens (own-access-tokens.ts). */
  verify: (token: string) => Promise<OwnAccessToken | undefined>;
}

interface GrantClient {
  clientId: string;
  tokenEndpointAuthMethod?: string;
}

const PARAMS = [
  'subject_token',
  'subject_token_type',
  'audience',
  'resource',
  'scope',
  'requested_token_type',
  'actor_token',
  'actor_token_type',
];

function single(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !value) return refuse('invalid_request', name, `${name} must be one non-empty value (RFC 8693 §2.1)`);
  return value;
}

/** Steps 1–4: who asks, for which provider. */
function checkRequest(
  ctx: KoaContextWithOIDC,
  client: GrantClient,
  thirdParty: ThirdParty,
): { resource: string; provider: ResolvedProvider } {
  if (!client.tokenEndpointAuthMethod || client.tokenEndpointAuthMethod === 'none')
    refuse('invalid_client', 'public_client', 'token exchange needs client authentication (RFC 8693 §2.1): public clients cannot use it');
  const resource = thirdParty.clientResources.get(client.clientId);
  if (!resource)
    refuse('unauthorized_client', 'no_resource', 'this client is not an MCP server of this authorization server (no configured resource)');
  if (ctx.get('DPoP'))
    refuse(
      'invalid_request',
      'dpop',
      "this grant returns the provider's token, which cannot be bound to a DPoP key: send the request without a DPoP proof (RFC 9449 §5)",
    );
  const params = ctx.oidc.params as Record<string, unknown>;
  if (!single(params.subject_token, 'subject_token'))
    refuse('invalid_request', 'subject_token', 'subject_token is required (RFC 8693 §2.1)');
  if (single(params.subject_token_type, 'subject_token_type') !== ACCESS_TOKEN_TYPE)
    refuse('invalid_request', 'subject_token_type', `subject_token_type must be ${ACCESS_TOKEN_TYPE} (an access token of this server)`);
  const requested = single(params.requested_token_type, 'requested_token_type');
  if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE)
    refuse('invalid_request', 'requested_token_type', `only ${ACCESS_TOKEN_TYPE} can be issued here`);
  if (params.actor_token !== undefined || params.actor_token_type !== undefined)
    refuse('invalid_request', 'actor_token', 'delegation (actor_token) is not supported: the MCP server acts for the subject only');
  if (params.resource !== undefined)
    refuse('invalid_target', 'resource', 'name the provider with the audience parameter, not resource (RFC 8693 §2.1)');
  const audience = single(params.audience, 'audience');
  if (!audience) return refuse('invalid_request', 'audience', 'audience is required: the name of the provider (RFC 8693 §2.1)');
  const provider = thirdParty.providers.get(audience);
  if (!provider)
    return refuse('invalid_target', 'unknown_provider', `no provider named "${audience}" is configured here (RFC 8693 §2.2.2)`);
  if (!thirdParty.providers.mayUse(audience, resource!))
    return refuse('invalid_target', 'provider_not_allowed', `${resource} may not use the provider "${audience}" (RFC 8693 §2.2.2)`);
  return { resource: resource!, provider };
}

function checkScope(requested: unknown, granted: readonly string[]): void {
  if (requested === undefined) return;
  const beyond = splitScope(String(requested)).filter((s) => !granted.includes(s));
  if (beyond.length) refuse('invalid_scope', 'scope', `the provider did not grant: ${beyond.join(' ')} (RFC 8693 §2.1)`);
}

/** Registers the grant and advertises it (RFC 8414 `grant_types_supported`). */
export function installTokenExchangeGrant(provider: Provider, options: TokenExchangeOptions): void {
  const { thirdParty, logger } = options;
  const subject = { provider, store: options.store, production: options.production, verify: options.verify };

  async function connectNeeded(sub: string, clientId: string, resource: string, p: ResolvedProvider, reason: string): Promise<never> {
    const { ticket, expiresIn } = await thirdParty.records.issueTicket({ sub, provider: p.name, resource, clientId });
    throw new GrantRefusal('interaction_required', `Connect your ${p.displayName} account to continue`, reason, {
      extra: {
        connect_uri: `${options.issuer}/connect/${ticket}`,
        connect_expires_in: expiresIn,
        provider: p.name,
        provider_display_name: p.displayName,
      },
    });
  }

  async function tokenExchangeGrant(ctx: KoaContextWithOIDC): Promise<void> {
    const client = ctx.oidc.client as unknown as GrantClient;
    const params = ctx.oidc.params as Record<string, unknown>;
    let providerName: string | undefined;
    let account: string | undefined;
    try {
      const { resource, provider: p } = checkRequest(ctx, client, thirdParty);
      providerName = p.name;
      account = await subjectAccount(subject, String(params.subject_token), resource);
      const fresh = await thirdParty.freshTokens(account, p).catch((err: unknown) => {
        if (err instanceof ProviderUnavailable)
          refuse('temporarily_unavailable', 'provider_unavailable', `${p.displayName} could not be reached; try again later`);
        throw err;
      });
      if (!fresh.ok) return await connectNeeded(account, client.clientId, resource, p, fresh.reason);
      checkScope(params.scope, fresh.tokens.scopes);
      const { tokens } = fresh;
      const expiresIn = tokens.expiresAt === undefined ? undefined : Math.max(0, tokens.expiresAt - Math.floor(Date.now() / 1000));
      ctx.body = {
        access_token: tokens.accessToken,
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        ...(expiresIn !== undefined && { expires_in: expiresIn }),
        scope: tokens.scopes.join(' '),
      };
      audit(logger, 'third_party.token_exchanged', {
        client_id: client.clientId,
        account,
        provider: p.name,
        resource,
        refreshed: fresh.refreshed,
      });
    } catch (err) {
      if (!(err instanceof GrantRefusal)) throw err;
      audit(logger, 'third_party.refused', {
        client_id: client.clientId,
        account,
        provider: providerName,
        error: err.error,
        reason: err.reason,
      });
      throw providerError(err);
    }
  }

  provider.registerGrantType(TOKEN_EXCHANGE_GRANT_TYPE, tokenExchangeGrant as never, PARAMS);
  // A client need not list the grant: being a configured MCP server is what allows it (step 1).
  handlerDecidesGrant(provider, TOKEN_EXCHANGE_GRANT_TYPE);

  // RFC 8693 §2.2.2 with the connect URL: oidc-provider renders `error` and `error_description`
  // only; the members of an `interaction_required` answer are added to its JSON body here.
  const pending = new WeakMap<object, Record<string, unknown>>();
  (provider.on as (event: string, listener: (...args: unknown[]) => void) => void)('grant.error', (ctx, err) => {
    const extra = extraMembers(err);
    if (extra && ctx && typeof ctx === 'object') pending.set(ctx, extra);
  });
  provider.use(async (ctx, next) => {
    await next();
    const extra = pending.get(ctx);
    if (!extra) return;
    pending.delete(ctx);
    if (ctx.body && typeof ctx.body === 'object' && !Buffer.isBuffer(ctx.body)) Object.assign(ctx.body as object, extra);
  });
}
