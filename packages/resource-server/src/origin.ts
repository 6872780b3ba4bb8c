import { ResourceServerError } from './errors.js';
import { isLoopbackHost } from '@mcp-auth-kit/protocol';

/** Serialised origin (`scheme://host[:port]`, lowercased, default port dropped), or `undefined`. */
export function normalizeOrigin(value: string): string | undefined {
  if (value === 'null') return 'null';
  try {
    const url = new URL(value);
    if (url.origin === 'null') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/**
 * Streamable HTTP §Security: a present `Origin` that is not allowed is refused with 403 (DNS
 * rebinding). A missing `Origin` (non-browser clients) is allowed.
 * @throws {ResourceServerError} `origin_forbidden`
 */
export function checkOrigin(origin: string | undefined, allowed: ReadonlySet<string>): void {
  if (origin === undefined) return;
  const normalized = normalizeOrigin(origin.trim());
  if (normalized === undefined || !allowed.has(normalized)) {
    throw new ResourceServerError('origin_forbidden', { detail: { origin } });
  }
}

/** Lowercased `host[:port]` with the default port of `scheme` dropped. */
export function normalizeHost(value: string, scheme: 'http:' | 'https:' = 'http:'): string | undefined {
  try {
    const url = new URL(`${scheme}//${value}`);
    if (url.pathname !== '/' || url.username !== '' || url.search !== '') return undefined;
    return url.host;
  } catch {
    return undefined;
  }
}

/**
 * Optional `Host` allowlist (a second DNS-rebinding guard that also covers requests without
 * `Origin`). `allowed` undefined means no check.
 * @throws {ResourceServerError} `host_forbidden`
 */
export function checkHost(host: string | undefined, allowed: ReadonlySet<string> | undefined, scheme: 'http:' | 'https:'): void {
  if (allowed === undefined) return;
  const normalized = host === undefined ? undefined : normalizeHost(host, scheme);
  if (normalized === undefined || !allowed.has(normalized)) {
    throw new ResourceServerError('host_forbidden', { detail: { host } });
  }
}

/**
 * The default Host guard of a server whose `resource` is on loopback: a DNS-rebinding page
 * reaches it under the attacker's host name, and a plain GET from that page carries no `Origin`
 * (the browser deems it same-origin). Loopback names pass with any port (tests and local
 * clients use 127.0.0.1 or localhost interchangeably); any other name is refused.
 * @throws {ResourceServerError} `host_forbidden`
 */
export function checkLoopbackHost(host: string | undefined, scheme: 'http:' | 'https:'): void {
  const normalized = host === undefined ? undefined : normalizeHost(host, scheme);
  const hostname = normalized === undefined ? undefined : new URL(`${scheme}//${normalized}`).hostname;
  if (hostname === undefined || !isLoopbackHost(hostname)) {
    throw new ResourceServerError('host_forbidden', { detail: { host } });
  }
}
