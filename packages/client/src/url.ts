import { isLoopbackHost } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthError } from './errors.js';

export interface UrlPolicy {
  /** Allow plain http to any host (tests only). Default false: http only for loopback hosts. */
  allowInsecureRequests?: boolean;
}

/**
 * Security Best Practices (SSRF, OAuth 2.1 §1.5): OAuth-related URLs must be https, or http to a
 * loopback host; every other scheme (`javascript:`, `data:`, `file:` …) is refused.
 */
export function assertAllowedUrl(input: string | URL, what: string, policy: UrlPolicy = {}): URL {
  let url: URL;
  try {
    url = input instanceof URL ? input : new URL(input);
  } catch (cause) {
    throw new McpAuthError(ERR.URL_FORBIDDEN, `${what} is not a valid URL`, { cause });
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && (policy.allowInsecureRequests || isLoopbackHost(url.hostname))) return url;
  throw new McpAuthError(
    ERR.URL_FORBIDDEN,
    `${what} must use https (http is allowed only for loopback hosts); got scheme "${url.protocol}"`,
  );
}

/** The MCP server URL as used for matching: no fragment, no query. */
export function serverKey(url: string | URL): string {
  const u = new URL(url);
  u.hash = '';
  u.search = '';
  return u.href;
}

/**
 * RFC 9728 §3.3 / §7.3: the PRM `resource` must identify the server that was called. Accepted when
 * it equals the server URL or is a path-prefix of it on the same origin (a server at
 * `https://h/mcp` may publish `https://h`); scheme and host compare case-insensitively.
 */
export function resourceMatchesServer(resource: string, server: string | URL): boolean {
  let r: URL;
  try {
    r = new URL(resource);
  } catch {
    return false;
  }
  if (r.hash || resource.includes('#')) return false;
  const s = new URL(server);
  if (r.origin !== s.origin) return false;
  if (r.search && r.search !== s.search) return false;
  const rp = r.pathname.replace(/\/$/, '');
  const sp = s.pathname.replace(/\/$/, '');
  return sp === rp || sp.startsWith(rp + '/');
}
