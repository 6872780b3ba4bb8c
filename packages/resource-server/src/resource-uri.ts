import { canonicalResource } from '@mcp-auth-kit/protocol';

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
