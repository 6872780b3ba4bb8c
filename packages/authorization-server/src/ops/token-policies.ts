/**
 * Who may revoke (RFC 7009) and introspect (RFC 7662) which token. Set explicitly rather than
 * relying on oidc-provider's defaults, which warn at run time that they should be changed.
 */
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { ResourceRegistry } from '../tokens/resources.js';

interface ClientLike {
  clientId: string;
  clientAuthMethod?: string;
}
interface TokenLike {
  clientId?: string;
  /** The user the token was issued to (none for client credentials). */
  accountId?: string;
  kind?: string;
  aud?: unknown;
  resourceServer?: { audience?: string };
}

/**
 * RFC 7009 §2.1: a client revokes only tokens issued to it. A public client asking for
 * another's token gets the same empty 200 as for an unknown token (no oracle for an
 * unauthenticated caller); an authenticated client is told it is not allowed.
 */
export async function revocationAllowed(_ctx: KoaContextWithOIDC, client: ClientLike, token: TokenLike): Promise<boolean> {
  if (token.clientId === client.clientId) return true;
  if (client.clientAuthMethod === 'none') return false;
  throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
}

function audiences(token: TokenLike): string[] {
  const aud = token.resourceServer?.audience ?? token.aud;
  return Array.isArray(aud) ? aud.map(String) : typeof aud === 'string' ? [aud] : [];
}

/** Decides whether `client` may see `token`'s introspection (RFC 7662 §4); `false` → `{"active":false}`. */
export type IntrospectionPolicy = (ctx: KoaContextWithOIDC, client: ClientLike, token: TokenLike) => Promise<boolean>;

/**
 * RFC 7662 §4: a client introspects its own tokens; a resource server introspects access
 * tokens issued for it, authenticating with its own credentials: a pre-registered confidential
 * client listed in the resource's `introspectionClients`, or whose `client_id` is the resource's
 * URI. Anyone else gets `{ "active": false }`, the answer for an unknown token (no oracle), and
 * so does everyone for a user's token once `accountActive` says the account is disabled or gone.
 * Shared by oidc-provider's own introspection (refresh tokens) and ours of JWT access tokens.
 */
export function createIntrospectionPolicy(
  resources: ResourceRegistry,
  staticClientIds: ReadonlySet<string>,
  accountActive?: (accountId: string) => Promise<boolean>,
): IntrospectionPolicy {
  const maySee = (client: ClientLike, token: TokenLike): boolean => {
    if (token.clientId === client.clientId) return true;
    // A DCR or CIMD client never speaks for a resource, whatever its client_id.
    if (client.clientAuthMethod === 'none' || !staticClientIds.has(client.clientId)) return false;
    const isAccessToken = token.kind === 'AccessToken' || token.kind === 'ClientCredentials';
    return isAccessToken && audiences(token).some((aud) => resourceServerClient(resources, aud, client.clientId));
  };
  return async (_ctx, client, token) => {
    if (!maySee(client, token)) return false;
    // RFC 7662 §2.2 "active": a user's token is not, once the account is disabled or deleted
    // (checked after the caller's right to see it: a foreign token costs no account read)
    if (accountActive !== undefined && typeof token.accountId === 'string' && !(await accountActive(token.accountId))) return false;
    return true;
  };
}

function resourceServerClient(resources: ResourceRegistry, audience: string, clientId: string): boolean {
  const resource = resources.get(audience);
  return !!resource && (resource.resource === clientId || (resource.introspectionClients ?? []).includes(clientId));
}
