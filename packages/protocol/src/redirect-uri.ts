/**
 * Which redirect URIs a client may register and be redirected to: an allowlist of schemes, so a
 * scheme nobody thought of (an OS protocol handler such as `ms-msdt:` or `search-ms:`) is refused
 * by default instead of being taken for a native app.
 *
 * - `https:` (OAuth 2.1 §2.3.1, MCP security best practices §Communication);
 * - `http:` on a loopback host, any port (RFC 8252 §7.3);
 * - a private-use scheme in reverse domain name form, i.e. containing a `.` (RFC 8252 §7.1,
 *   e.g. `com.example.app:/callback`).
 */
import { isLoopbackHost } from './address.js';

export type RedirectUriKind = 'https' | 'loopback' | 'private-use';

export type RedirectUriCheck = { ok: true; kind: RedirectUriKind; url: URL } | { ok: false; reason: string };

export interface RedirectUriOptions {
  /**
   * Further private-use schemes the operator trusts although they are not in reverse domain
   * name form (some desktop hosts register single-word schemes). Lower case, without `:`.
   */
  extraSchemes?: readonly string[];
}

const SCHEME = /^[a-z][a-z0-9+.-]*$/;

/** Why a scheme cannot be an operator's extra private-use scheme, or undefined when it can. */
export function extraSchemeProblem(scheme: string): string | undefined {
  if (!SCHEME.test(scheme)) return `"${scheme}" is not a lower-case URI scheme without ":" (RFC 3986 §3.1)`;
  if (['http', 'https'].includes(scheme)) return `"${scheme}" has its own rules (https anywhere, http only on loopback)`;
  if (['javascript', 'data', 'file', 'vbscript', 'blob', 'about', 'filesystem', 'view-source'].includes(scheme)) {
    return `"${scheme}" runs or reads content in the browser and can never be a redirect target`;
  }
  return undefined;
}

export function checkRedirectUri(uri: unknown, options: RedirectUriOptions = {}): RedirectUriCheck {
  if (typeof uri !== 'string') return { ok: false, reason: 'redirect URI must be a string' };
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return { ok: false, reason: 'redirect URI must be an absolute URI' };
  }
  if (url.hash || uri.includes('#')) return { ok: false, reason: 'redirect URI must not contain a fragment' };
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'https') return { ok: true, kind: 'https', url };
  if (scheme === 'http') {
    return isLoopbackHost(url.hostname)
      ? { ok: true, kind: 'loopback', url }
      : { ok: false, reason: 'http redirect URIs are allowed only on loopback hosts (RFC 8252 §7.3)' };
  }
  if (scheme.includes('.') || options.extraSchemes?.includes(scheme)) return { ok: true, kind: 'private-use', url };
  return {
    ok: false,
    reason: `redirect URI scheme "${scheme}:" is not allowed: use https, loopback http, or a private-use scheme in reverse domain name form (RFC 8252 §7.1)`,
  };
}

/** The kind of an allowed redirect URI, or undefined when it is refused. */
export function redirectUriKind(uri: unknown, options?: RedirectUriOptions): RedirectUriKind | undefined {
  const check = checkRedirectUri(uri, options);
  return check.ok ? check.kind : undefined;
}

/** RFC 8252: loopback and private-use redirect URIs belong to native apps. */
export function isNativeRedirectUri(uri: unknown, options?: RedirectUriOptions): boolean {
  const kind = redirectUriKind(uri, options);
  return kind === 'loopback' || kind === 'private-use';
}
