import { discoverAuthorizationServer, discoverProtectedResource, type ProtectedResourceMetadata } from '../discovery.js';
import { ERR, McpAuthError } from '../errors.js';
import { selectScope } from '../scope.js';
import type { ServerBinding } from '../store.js';
import { assertAllowedUrl, serverKey } from '../url.js';
import type { ClientContext } from './context.js';
import { forgetEarlierIssuer } from './leftovers.js';

export type DiscoveredBinding = ServerBinding & { prm: ProtectedResourceMetadata };

/**
 * Discovers the PRM and AS metadata of an MCP server and records the binding. `resourceMetadata`
 * is the challenge's `resource_metadata` URL when there is one.
 */
export async function discoverBinding(
  context: ClientContext,
  serverUrl: string | URL,
  resourceMetadata?: string,
): Promise<DiscoveredBinding> {
  const server = serverKey(serverUrl);
  const deps = context.depsFor(server);
  let found: { metadata: ProtectedResourceMetadata; url?: URL };
  try {
    found = await discoverProtectedResource(server, deps, resourceMetadata);
  } catch (err) {
    if (!context.opts.legacyDiscovery || !(err instanceof McpAuthError) || err.code !== ERR.PRM_NOT_FOUND) throw err;
    // MCP 2025-03-26: no PRM; the server's origin is the authorization server ("authorization base URL").
    found = { metadata: { resource: server, authorization_servers: [new URL(server).origin] } };
  }
  const { metadata: prm, url } = found;
  // RFC 9728 §7.6: the client picks; an AS it holds credentials for comes first.
  const known = new Set([...(context.opts.preRegistered ?? []).map((p) => p.issuer), ...(context.machine ? [context.machine.issuer] : [])]);
  const issuer = prm.authorization_servers.find((s) => known.has(s)) ?? prm.authorization_servers[0]!;
  assertAllowedUrl(issuer, 'authorization server issuer', deps);
  const asMeta = await discoverAuthorizationServer(issuer, deps);
  const binding: ServerBinding = {
    server,
    resource: prm.resource,
    issuer,
    ...(url && { resource_metadata_url: url.href }),
    as_metadata: asMeta,
    ...(prm.scopes_supported && { scopes_supported: prm.scopes_supported }),
    ...(((Array.isArray(prm.dpop_signing_alg_values_supported) && prm.dpop_signing_alg_values_supported.length > 0) ||
      prm.dpop_bound_access_tokens_required === true) && { dpop_supported: true }),
  };
  const previous = await context.store.getServer(server);
  if (previous && previous.issuer !== issuer) {
    context.emit({ type: 'authorization_server_changed', server, from: previous.issuer, to: issuer });
  }
  await context.store.setServer(binding);
  if (previous && previous.issuer !== issuer) await forgetEarlierIssuer(context, previous);
  context.emit({ type: 'discovered', server, resource: binding.resource, issuer });
  return { ...binding, prm };
}

/** The scope of a new authorization, from the challenge's `scope` when there is one. */
export function scopeToRequest(context: ClientContext, binding: DiscoveredBinding, challengeScope: string | undefined): string | undefined {
  return selectScope({
    challengeScope,
    scopesSupported: binding.prm.scopes_supported,
    asScopesSupported: binding.as_metadata.scopes_supported,
    wantRefreshToken: context.wantRefresh && !context.machine,
  });
}
