import { isAccessTokenSyntax, tokenLifetime } from '@mcp-auth-kit/protocol';
import { boundRecord } from '../credential-binding.js';
import type { DpopKey } from '../dpop.js';
import { ERR, McpAuthError } from '../errors.js';
import { refreshGrant, type TokenEndpointResponse } from '../oauth.js';
import { tokenKey, type ClientInformation, type ServerBinding, type StoredTokens } from '../store.js';
import type { ClientContext } from './context.js';
import { clientFor, grantContext } from './credentials.js';
import type { DpopKeys } from './dpop-keys.js';
import { signedInAccount } from './signed-in-account.js';

export function nowSeconds() {
  return Math.floor(Date.now() / 1000);
}

/**
 * The record stored for a token response; what the response leaves out is kept from `previous`.
 * An access token outside the RFC 6750 §2.1 b64token syntax (CR, LF, spaces) is refused here,
 * without being echoed: it could not travel in an Authorization header, and the header error
 * would print the token, line breaks and all.
 */
export function tokensFrom(
  res: TokenEndpointResponse,
  binding: ServerBinding,
  client: ClientInformation,
  requestedScope: string | undefined,
  previous?: StoredTokens,
  dpop?: DpopKey,
): StoredTokens {
  if (!isAccessTokenSyntax(res.access_token)) {
    throw new McpAuthError(
      ERR.TOKEN_REQUEST_FAILED,
      'the token endpoint returned an access_token that is not a valid token (RFC 6750 §2.1); it is not shown',
    );
  }
  const scope = res.scope ?? requestedScope ?? previous?.scope;
  const account = signedInAccount(res, binding.issuer) ?? previous?.account;
  // RFC 6749 §5.1, in range: an absurd expires_in must not make an expiry no date can show.
  const lifetime = tokenLifetime(res.expires_in);
  const refresh = res.refresh_token ?? previous?.refresh_token;
  return {
    issuer: binding.issuer,
    resource: binding.resource,
    access_token: res.access_token,
    token_type: res.token_type,
    client_id: client.client_id,
    ...(refresh !== undefined && { refresh_token: refresh }),
    ...(lifetime !== undefined && { expires_at: nowSeconds() + lifetime }),
    ...(scope !== undefined && { scope }),
    ...((requestedScope ?? previous?.requested_scope) !== undefined && { requested_scope: requestedScope ?? previous?.requested_scope }),
    ...(res.token_type.toLowerCase() === 'dpop' && dpop && { dpop_jkt: dpop.jkt }),
    ...(account !== undefined && { account }),
  };
}

/** The stored tokens of each binding: read, checked for use, and refreshed. */
export class TokenKeeper {
  private readonly context: ClientContext;
  private readonly dpopKeys: DpopKeys;
  private readonly refreshing = new Map<string, Promise<StoredTokens | undefined>>();

  constructor(context: ClientContext, dpopKeys: DpopKeys) {
    this.context = context;
    this.dpopKeys = dpopKeys;
  }

  /** The stored tokens of a binding; a record of another (issuer, resource) is never used. */
  async storedTokens(binding: ServerBinding): Promise<StoredTokens | undefined> {
    return boundRecord(await this.context.store.getTokens(binding.issuer, binding.resource), binding);
  }

  async validTokens(binding: ServerBinding): Promise<StoredTokens | undefined> {
    const tokens = await this.storedTokens(binding);
    if (!tokens || !(await this.usable(tokens, binding))) return undefined;
    const skew = this.context.opts.expirySkewSeconds;
    if (tokens.expires_at === undefined || tokens.expires_at - skew > nowSeconds()) return tokens;
    if (!tokens.refresh_token) return undefined;
    return this.refresh(binding, tokens.access_token);
  }

  /** DPoP-bound tokens are usable only with the key they are bound to (kept in memory). */
  async usable(tokens: StoredTokens, binding: ServerBinding): Promise<boolean> {
    if (tokens.token_type.toLowerCase() !== 'dpop') return true;
    const key = await this.dpopKeys.keyFor(binding, tokens.client_id);
    return !!key && key.jkt === tokens.dpop_jkt;
  }

  /**
   * Refreshes the tokens of a binding. Concurrent callers share one refresh (single flight), so a
   * rotating refresh token is redeemed once. Returns undefined when refresh is impossible or
   * refused (the stale tokens are then dropped).
   */
  async refresh(binding: ServerBinding, staleAccessToken?: string): Promise<StoredTokens | undefined> {
    const key = tokenKey(binding.issuer, binding.resource);
    const pending = this.refreshing.get(key);
    if (pending) return pending;
    const store = this.context.store;
    const attempt = async (): Promise<StoredTokens | undefined> => {
      const current = await this.storedTokens(binding);
      if (!current) return undefined;
      // Someone else already refreshed (another caller or process): use the newer token.
      if (staleAccessToken && current.access_token !== staleAccessToken) return current;
      if (!current.refresh_token || !(await this.usable(current, binding))) return undefined;
      const client = await clientFor(this.context, binding);
      if (!client || client.client_id !== current.client_id) return undefined;
      try {
        const ctx = await grantContext(this.context, this.dpopKeys, binding, client);
        const res = await refreshGrant(ctx, current.refresh_token, binding.resource);
        const next = tokensFrom(res, binding, client, current.requested_scope, current, ctx.dpopKey);
        await store.setTokens(next);
        this.context.emit({ type: 'refreshed', issuer: binding.issuer, resource: binding.resource });
        return next;
      } catch (err) {
        if (err instanceof McpAuthError && err.code === ERR.TOKEN_REQUEST_FAILED && err.error) {
          // invalid_grant & co: the refresh token is dead; a new authorization is needed.
          await store.deleteTokens(binding.issuer, binding.resource);
          this.context.emit({
            type: 'refresh_failed',
            issuer: binding.issuer,
            resource: binding.resource,
            error: err.error,
            ...(err.error_description !== undefined && { error_description: err.error_description }),
          });
          return undefined;
        }
        throw err;
      }
    };
    // Cross-process single flight when the store offers a lock (the file store does): this pair's
    // lock only, so a slow token endpoint (bounded by the request deadline) holds up no other server.
    // The tokens are read again under it, so a refresh token another process redeemed meanwhile is
    // not redeemed twice (its new access token is used instead).
    const run = store.withLock ? store.withLock(attempt, `refresh ${key}`) : attempt();
    this.refreshing.set(key, run);
    try {
      return await run;
    } finally {
      this.refreshing.delete(key);
    }
  }
}
