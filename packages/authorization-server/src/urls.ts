/**
 * Pure URL classification helpers (no I/O), shared by config validation, client policy and
 * the CIMD trust policy.
 */

/** True for `localhost`, `*.localhost`, 127.0.0.0/8 and ::1 (brackets allowed). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  if (/^::ffff:127\./.test(host)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Schemes that must never be a redirect target (script execution, local files, inline data). */
export const DANGEROUS_SCHEMES = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'blob:',
  'about:',
  'filesystem:',
  'view-source:',
  'chrome:',
  'ws:',
  'wss:',
  'ftp:',
  'mailto:',
  'tel:',
]);

export function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

export function isDangerousRedirectUri(uri: string): boolean {
  const url = parseUrl(uri);
  if (!url) return true;
  return DANGEROUS_SCHEMES.has(url.protocol.toLowerCase());
}

export function isLoopbackHttpUri(uri: string): boolean {
  const url = parseUrl(uri);
  return !!url && url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/** Private-use URI scheme (RFC 8252 §7.1): anything that is not http(s) and not dangerous. */
export function isCustomSchemeUri(uri: string): boolean {
  const url = parseUrl(uri);
  if (!url) return false;
  const scheme = url.protocol.toLowerCase();
  return scheme !== 'http:' && scheme !== 'https:' && !DANGEROUS_SCHEMES.has(scheme);
}

/** A client whose every redirect URI is loopback http or a custom scheme can only be native. */
export function looksNative(redirectUris: readonly string[]): boolean {
  return (
    redirectUris.length > 0 &&
    redirectUris.every((uri) => isLoopbackHttpUri(uri) || isCustomSchemeUri(uri))
  );
}

export function allLoopback(redirectUris: readonly string[]): boolean {
  return redirectUris.length > 0 && redirectUris.every((uri) => isLoopbackHttpUri(uri));
}

/**
 * Host pattern match: `example.com` matches exactly, `*.example.com` matches any subdomain
 * (not the apex). Case-insensitive.
 */
export function hostMatches(pattern: string, hostname: string): boolean {
  const p = pattern.toLowerCase().trim();
  const h = hostname.toLowerCase();
  if (p.startsWith('*.')) {
    const suffix = p.slice(1);
    return h.endsWith(suffix) && h.length > suffix.length;
  }
  return p === h;
}

/** RFC 8707 §2: an absolute URI without a fragment. */
export function isValidResourceIndicator(value: string): boolean {
  const url = parseUrl(value);
  return !!url && !value.includes('#') && (url.protocol === 'https:' || url.protocol === 'http:');
}
