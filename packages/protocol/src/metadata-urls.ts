/**
 * Well-known metadata URLs and the order in which MCP clients try them. The resource server
 * publishes at the first URL of each list; the client and the resource server's own
 * authorization-server lookup walk the lists in this order.
 */

function pathOf(url: URL): string {
  return url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
}

/**
 * RFC 9728 §3.1: the Protected Resource Metadata URL of a resource, the well-known suffix
 * inserted between the origin and the resource's path (query and fragment dropped).
 */
export function protectedResourceMetadataUrl(resource: string | URL): string {
  const url = new URL(resource);
  return `${url.origin}/.well-known/oauth-protected-resource${pathOf(url)}`;
}

/**
 * MCP §Protected Resource Metadata Discovery: the challenge's `resource_metadata` when the server
 * sent one, else the path-inserted well-known URL of the server URL, then the origin's root one.
 */
export function protectedResourceMetadataUrls(serverUrl: string | URL, resourceMetadata?: string): URL[] {
  if (resourceMetadata) return [new URL(resourceMetadata)];
  const server = new URL(serverUrl);
  const urls = [new URL('/.well-known/oauth-protected-resource', server.origin)];
  if (pathOf(server)) urls.unshift(new URL(protectedResourceMetadataUrl(server)));
  return urls;
}

/**
 * MCP §Authorization Server Metadata Discovery. Issuer with a path: RFC 8414 §3.1 path insertion,
 * OpenID Connect Discovery path insertion, OpenID Connect path appending. Issuer without a path:
 * RFC 8414, then OpenID Connect Discovery.
 */
export function authorizationServerMetadataUrls(issuer: string | URL): URL[] {
  const url = new URL(issuer);
  const path = pathOf(url);
  if (!path) {
    return [new URL('/.well-known/oauth-authorization-server', url.origin), new URL('/.well-known/openid-configuration', url.origin)];
  }
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, url.origin),
    new URL(`/.well-known/openid-configuration${path}`, url.origin),
    new URL(`${path}/.well-known/openid-configuration`, url.origin),
  ];
}
