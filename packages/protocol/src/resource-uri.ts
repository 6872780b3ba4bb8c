/**
 * Canonical form used to compare resource identifiers (RFC 8707 §2, MCP §Canonical Server URI):
 * scheme and host lowercased, default port dropped, dot-segments resolved (all by WHATWG URL),
 * and one trailing slash ignored (`/mcp/` ≡ `/mcp`, `https://a/` ≡ `https://a`). The path is
 * otherwise case-sensitive and exact: `/mcp2`, `/MCP` and `/mcp/x` are other resources.
 * Returns `undefined` for values that cannot identify a resource (not absolute, fragment, userinfo).
 */
export function canonicalResource(value: string): string | undefined {
  if (value.includes('#')) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '') return undefined;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  let path = url.pathname;
  if (path.endsWith('/')) path = path.slice(0, -1);
  return `${url.protocol}//${url.host}${path}${url.search}`;
}
