import { discoverAuthorizationServer } from '../discovery.js';
import { revokeToken } from '../oauth.js';
import type { ServerBinding, StoredTokens } from '../store.js';
import type { ClientContext } from './context.js';
import { clientFor, grantContext } from './credentials.js';
import { DpopKeys } from './dpop-keys.js';

/**
 * Leftover grants revoked per logout, at most: each costs an AS metadata discovery and a
 * revocation request (each within the request deadline), so a store full of them cannot make
 * logout unbounded. Past it the records are still deleted.
 */
export const MAX_LEFTOVER_REVOCATIONS = 4;

/** What revoking a leftover grant needs of the client (a subset of auth-fetch.ts's parts). */
interface RevocationParts {
  readonly context: ClientContext;
  readonly dpopKeys: DpopKeys;
}

/**
 * Logout's second half (review r46 F2): the token records kept under an authorization server the
 * MCP server no longer names (it switched AS) are revoked, best effort and bounded, and deleted
 * with their DPoP keys, and so are the client registrations at those issuers once nothing refers
 * to them. The registration at an issuer a logged-out server still names is kept, as before (a
 * new login reuses it). `everything`: every token record goes, bound to a server or not.
 */
export async function forgetLeftovers(parts: RevocationParts, loggedOut: ServerBinding[], everything: boolean): Promise<void> {
  const { store } = parts.context;
  if (!store.listTokens) return;
  const remaining = await store.listServers();
  const stillBound = (t: StoredTokens) => remaining.some((b) => b.issuer === t.issuer && b.resource === t.resource);
  const leftovers = (await store.listTokens()).filter(
    (t) => !stillBound(t) && (everything || loggedOut.some((b) => b.resource === t.resource)),
  );
  let revocations = 0;
  for (const t of leftovers) {
    const via = loggedOut.find((b) => b.resource === t.resource);
    if (via && revocations < MAX_LEFTOVER_REVOCATIONS) {
      revocations++;
      await revokeLeftover(parts, via, t).catch(() => undefined);
    }
    await store.deleteTokens(t.issuer, t.resource);
    await store.deleteDpopKey?.(t.issuer, t.resource);
  }
  const tokens = await store.listTokens();
  const named = (issuer: string) => [...remaining, ...loggedOut].some((b) => b.issuer === issuer);
  // logout(): also the registrations at issuers an earlier switch left (their grants already went)
  const candidates = [
    ...leftovers.map((t) => t.issuer),
    ...(everything && store.listClients ? (await store.listClients()).map((c) => c.issuer) : []),
  ];
  for (const issuer of new Set(candidates)) {
    if (named(issuer) || tokens.some((t) => t.issuer === issuer)) continue;
    await store.deleteClient(issuer);
  }
}

/**
 * RFC 7009 at the issuer that granted `t`: its metadata fetched again (under the egress policy of
 * the server that named it) and the grant revoked with the client registered there.
 */
async function revokeLeftover(parts: RevocationParts, via: ServerBinding, t: StoredTokens) {
  const { context, dpopKeys } = parts;
  const as_metadata = await discoverAuthorizationServer(t.issuer, context.depsFor(via.server));
  const old: ServerBinding = { ...via, issuer: t.issuer, as_metadata };
  const client = await clientFor(context, old);
  if (!client || client.client_id !== t.client_id) return;
  const ctx = await grantContext(context, dpopKeys, old, client);
  if (t.refresh_token) await revokeToken(ctx, t.refresh_token, 'refresh_token');
  else await revokeToken(ctx, t.access_token, 'access_token');
}

/**
 * The MCP server now names another authorization server than `previous.issuer`: the grant kept
 * from the earlier one is revoked (RFC 7009, best effort: one request within the deadline, with
 * the metadata already stored) and deleted with its DPoP key. The registration there is kept
 * (bounded by the stored-value caps; reused if the server names that AS again; `logout()` forgets it).
 */
export async function forgetEarlierIssuer(context: ClientContext, previous: ServerBinding): Promise<void> {
  const { store } = context;
  const tokens = await store.getTokens(previous.issuer, previous.resource);
  if (tokens) {
    const client = await clientFor(context, previous).catch(() => undefined);
    if (client && client.client_id === tokens.client_id) {
      const ctx = await grantContext(context, new DpopKeys(context), previous, client).catch(() => undefined);
      if (ctx) await revokeToken(ctx, tokens.refresh_token ?? tokens.access_token, tokens.refresh_token ? 'refresh_token' : 'access_token');
    }
    await store.deleteTokens(previous.issuer, previous.resource);
    await store.deleteDpopKey?.(previous.issuer, previous.resource);
  }
}
