/**
 * Pure URL classification helpers (no I/O), shared by config validation, client policy and
 * the CIMD trust policy. Loopback and redirect-URI scheme rules live in @mcp-auth-kit/protocol.
 */
import { isLoopbackHost, isNativeRedirectUri, redirectUriKind, type RedirectUriOptions } from '@mcp-auth-kit/protocol';

export function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** A client whose every redirect URI is loopback http or a private-use scheme can only be native. */
export function looksNative(redirectUris: readonly string[], options?: RedirectUriOptions): boolean {
  return redirectUris.length > 0 && redirectUris.every((uri) => isNativeRedirectUri(uri, options));
}

export function allLoopback(redirectUris: readonly string[]): boolean {
  return redirectUris.length > 0 && redirectUris.every((uri) => redirectUriKind(uri) === 'loopback');
}

/**
 * Host pattern match: `example.com` matches exactly, `*.example.com` matches any subdomain
 * (not the apex). Case-insensitive, and a fully qualified name's trailing dot is ignored on both
 * sides: DNS and TLS treat `example.com.` as `example.com`, so a policy must too.
 */
export function hostMatches(pattern: string, hostname: string): boolean {
  const p = withoutRootDot(pattern.toLowerCase().trim());
  const h = withoutRootDot(hostname.toLowerCase());
  if (p.startsWith('*.')) {
    const suffix = p.slice(1);
    return h.endsWith(suffix) && h.length > suffix.length;
  }
  return p === h;
}

const withoutRootDot = (host: string): string => (host.endsWith('.') ? host.slice(0, -1) : host);

/** RFC 8707 §2: an absolute URI without a fragment. */
export function isValidResourceIndicator(value: string): boolean {
  const url = parseUrl(value);
  return !!url && !value.includes('#') && (url.protocol === 'https:' || url.protocol === 'http:');
}

/**
 * A peer the operator configures (an upstream provider, an ID-JAG IdP's keys, a third-party
 * provider) is reached over https; plain http only for a loopback peer of a loopback issuer
 * (development on one machine). `asLoopback`: the AS's own issuer host is loopback.
 */
export function isSecurePeerUrl(url: URL, asLoopback: boolean): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname) && asLoopback);
}
