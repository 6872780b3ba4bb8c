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

/** `true` when `aud` (a string or array, RFC 7519 §4.1.3) names `resource`. */
export function audienceIncludes(aud: unknown, resource: string): boolean {
  const expected = canonicalOf(resource);
  if (expected === undefined) return false;
  const values = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  // the usual case, `aud` spelled exactly as the configured resource, needs no URL parsing
  if (values.includes(resource)) return true;
  return values.some((v) => typeof v === 'string' && canonicalResource(v) === expected);
}

// A server compares against one configured resource: remember its canonical form.
let lastResource: string | undefined;
let lastCanonical: string | undefined;
function canonicalOf(resource: string): string | undefined {
  if (resource !== lastResource) {
    lastCanonical = canonicalResource(resource);
    lastResource = resource;
  }
  return lastCanonical;
}

/** The RFC 9728 §3.1 well-known URL: `/.well-known/oauth-protected-resource` + the resource path. */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}/.well-known/oauth-protected-resource${path}`;
}
