import type { ProtectedResourceMetadata } from '../discovery.js';
import { revokeToken } from '../oauth.js';
import type { AuthStore, ServerBinding, StoredTokens } from '../store.js';
import { serverKey } from '../url.js';
import { oauthChallenge, type Challenge } from '../www-authenticate.js';
import { authorizedFetch, type AuthFetchParts } from './auth-fetch.js';
import { Authorizer } from './authorization-flows.js';
import { ClientContext } from './context.js';
import { clientFor, grantContext } from './credentials.js';
import { forgetLeftovers } from './leftovers.js';
import { DpopKeys } from './dpop-keys.js';
import { resolveClientOptions } from '../config/resolve.js';
import type { McpAuthClientOptions } from '../config/types.js';
import { discoverBinding, scopeToRequest } from './server-binding.js';
import { checkAccess, type AccessCheck } from './token-check.js';
import { nowSeconds, TokenKeeper } from './tokens.js';

/** What {@link McpAuthClient.status} reports per server (no secrets). */
export interface ServerStatus {
  server: string;
  resource: string;
  issuer: string;
  client_id?: string | undefined;
  scope?: string | undefined;
  expires_at?: number | undefined;
  has_refresh_token: boolean;
  authenticated: boolean;
}

/**
 * An MCP authorization client: discovery (RFC 9728, RFC 8414/OIDC), registration (pre-registered,
 * CIMD, DCR), authorization code + PKCE with RFC 9207 `iss` validation, RFC 8707 `resource` on
 * every request, refresh with rotation, single-flight refresh and step-up.
 *
 * @example
 * const client = new McpAuthClient({ clientName: 'My host', openAuthorizationUrl: async (u) => open(u) });
 * const res = await client.fetch('https://mcp.example.com/mcp', { method: 'POST', body });
 */
export class McpAuthClient {
  readonly store: AuthStore;
  private readonly parts: AuthFetchParts;

  constructor(options: McpAuthClientOptions) {
    const context = new ClientContext(resolveClientOptions(options));
    const dpopKeys = new DpopKeys(context);
    this.store = context.store;
    this.parts = {
      context,
      dpopKeys,
      keeper: new TokenKeeper(context, dpopKeys),
      authorizer: new Authorizer(context, dpopKeys),
      failedStepUps: new Set<string>(),
    };
    this.fetch = this.fetch.bind(this);
  }

  /**
   * Discovers the PRM and AS metadata of an MCP server and records the binding. `resourceMetadata`
   * is the challenge's `resource_metadata` URL when there is one.
   */
  async discover(serverUrl: string | URL, resourceMetadata?: string): Promise<ServerBinding & { prm: ProtectedResourceMetadata }> {
    return discoverBinding(this.parts.context, serverUrl, resourceMetadata);
  }

  /** A valid access token for the server, refreshing it when expired; undefined when none. */
  async getTokens(serverUrl: string | URL): Promise<StoredTokens | undefined> {
    const binding = await this.store.getServer(serverKey(serverUrl));
    return binding ? this.parts.keeper.validTokens(binding) : undefined;
  }

  /**
   * Refreshes the tokens of a binding. Concurrent callers share one refresh (single flight), so a
   * rotating refresh token is redeemed once. Returns undefined when refresh is impossible or
   * refused (the stale tokens are then dropped).
   */
  async refresh(binding: ServerBinding, staleAccessToken?: string): Promise<StoredTokens | undefined> {
    return this.parts.keeper.refresh(binding, staleAccessToken);
  }

  /**
   * Runs a full authorization for an MCP server (discovery when needed, registration, browser
   * flow or client credentials grant) and stores the tokens. Concurrent calls for the same server
   * and scope share one flow.
   */
  async authorize(serverUrl: string | URL, options: { scope?: string; challenge?: Challenge } = {}): Promise<StoredTokens> {
    const binding = await this.discover(serverUrl, options.challenge?.params.resource_metadata);
    const scope = options.scope ?? scopeToRequest(this.parts.context, binding, options.challenge?.params.scope);
    return this.parts.authorizer.authorize(binding, scope);
  }

  /**
   * fetch with MCP authorization: attaches the bound access token, refreshes it when expired or
   * on 401 `invalid_token`, runs discovery + authorization on 401, steps up on 403
   * `insufficient_scope` with the scope union (bounded retries), and retries the request.
   * The final response is returned as is (e.g. a 403 when step-up is exhausted).
   */
  async fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    return authorizedFetch(this.parts, input, init);
  }

  /**
   * Reacts to a 401 from an MCP server outside {@link fetch} (e.g. from an SDK `authProvider`):
   * rediscovers from the challenge, refreshes when the stored token was the one refused and a
   * refresh token exists, otherwise runs a new authorization. Resolves with the new tokens.
   */
  async handleUnauthorized(serverUrl: string | URL, response: Response): Promise<StoredTokens> {
    const { keeper } = this.parts;
    const challenge = oauthChallenge(response);
    const fresh = await this.discover(serverUrl, challenge?.params.resource_metadata);
    const stored = await keeper.storedTokens(fresh);
    if (stored?.refresh_token && (await keeper.usable(stored, fresh))) {
      const refreshed = await keeper.refresh(fresh, stored.access_token);
      if (refreshed && refreshed.access_token !== stored.access_token) return refreshed;
    }
    return this.parts.authorizer.authorize(fresh, scopeToRequest(this.parts.context, fresh, challenge?.params.scope));
  }

  /**
   * Forgets tokens (and the discovery binding) of one server, or of every server, after revoking
   * them at the AS when it has a `revocation_endpoint` (RFC 7009, best effort).
   */
  async logout(serverUrl?: string | URL): Promise<void> {
    const { context, dpopKeys, keeper } = this.parts;
    const bindings = serverUrl
      ? [await this.store.getServer(serverKey(serverUrl))].filter((b): b is ServerBinding => !!b)
      : await this.store.listServers();
    for (const b of bindings) {
      const tokens = await keeper.storedTokens(b);
      const client = tokens && (await clientFor(context, b).catch(() => undefined));
      if (tokens && client && client.client_id === tokens.client_id) {
        // RFC 7009: revoking the refresh token ends the grant at the AS (best effort). A binding
        // whose records disagree on the issuer is not revoked, only forgotten.
        const ctx = await grantContext(context, dpopKeys, b, client).catch(() => undefined);
        if (ctx && tokens.refresh_token) await revokeToken(ctx, tokens.refresh_token, 'refresh_token');
        else if (ctx) await revokeToken(ctx, tokens.access_token, 'access_token');
      }
      await this.store.deleteTokens(b.issuer, b.resource);
      await dpopKeys.forget(b);
      await this.store.deleteServer(b.server);
    }
    await forgetLeftovers(this.parts, bindings, !serverUrl);
  }

  /**
   * Asks the MCP server whether it accepts the stored access token, in the revision it speaks
   * (2026-07-28 `server/discover`, else 2025-11-25 `initialize`), without refreshing or authorizing:
   * `valid`, `expired`, `revoked` (refused before its expiry), `no_tokens` or `unknown` (5xx, or a
   * 4xx that did not judge the token). A server that does not answer throws `MCP_AUTH_SERVER_UNREACHABLE`.
   */
  async checkAccess(serverUrl: string | URL): Promise<AccessCheck> {
    return checkAccess(this.parts, serverUrl);
  }

  /** What the store knows, without secrets. */
  async status(): Promise<ServerStatus[]> {
    const out: ServerStatus[] = [];
    for (const b of await this.store.listServers()) {
      const t = await this.parts.keeper.storedTokens(b);
      out.push({
        server: b.server,
        resource: b.resource,
        issuer: b.issuer,
        client_id: t?.client_id,
        scope: t?.scope,
        expires_at: t?.expires_at,
        has_refresh_token: !!t?.refresh_token,
        authenticated: !!t && (t.expires_at === undefined || t.expires_at > nowSeconds() || !!t.refresh_token),
      });
    }
    return out;
  }
}
