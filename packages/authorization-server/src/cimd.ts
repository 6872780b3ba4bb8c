/**
 * Client ID Metadata Documents on top of oidc-provider's draft-02 feature: the MCP trust
 * policy (allowed / denied hosts), the dev-only private-network allowance (NOTES gotcha 1) and
 * the document adjustments that must happen before oidc-provider validates it.
 */
import { lookup } from 'node:dns/promises';
import { rootCertificates } from 'node:tls';
import type { CimdConfig } from './config.js';
import type { Logger } from './logger.js';
import type { KeyValueStore } from './storage/types.js';
import { classifyIpAddress, isLoopbackHost, isSpecialUseAddress, type RedirectUriOptions } from '@mcp-auth-kit/protocol';
import { hostMatches, looksNative, parseUrl } from './urls.js';

export type FetchLike = (url: string | URL, options: Omit<RequestInit, 'dispatcher'> & { dispatcher?: unknown }) => Promise<Response>;

/** Why a client_id URL is refused by the trust policy, or undefined when it may be fetched. */
export function cimdRefusal(clientId: string, config: CimdConfig): string | undefined {
  const url = parseUrl(clientId);
  if (!url || url.protocol !== 'https:') return 'client_id URL must use https';
  if (url.pathname === '/' || url.pathname === '') return 'client_id URL must contain a path';
  if (url.username || url.password) return 'client_id URL must not contain credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (config.deniedHosts?.some((p) => hostMatches(p, host))) return `host ${host} is denied by policy`;
  if (config.allowedHosts?.length && !config.allowedHosts.some((p) => hostMatches(p, host))) {
    return `host ${host} is not in the allowed hosts`;
  }
  if (!config.allowPrivateNetwork && (isLoopbackHost(host) || isSpecialUseAddress(host))) {
    return `host ${host} is a loopback or private address`;
  }
  return undefined;
}

/**
 * Adjusts a fetched CIMD document: clients publishing only loopback / custom-scheme redirect
 * URIs without `application_type` are native (NOTES gotcha 2, RFC 8252 §7.3 any-port loopback).
 */
export function adjustDocument(doc: Record<string, unknown>, options?: RedirectUriOptions): Record<string, unknown> {
  const uris = Array.isArray(doc.redirect_uris) ? (doc.redirect_uris as unknown[]) : [];
  if (doc.application_type === undefined && uris.every((u) => typeof u === 'string') && looksNative(uris as string[], options)) {
    return { ...doc, application_type: 'native' };
  }
  return doc;
}

function undiciAgentClass(): (new (opts: unknown) => unknown) | undefined {
  // Node's bundled undici is not importable by name; its Agent is the global dispatcher's class.
  void Response;
  const g = globalThis as Record<symbol, { constructor: new (opts: unknown) => unknown } | undefined>;
  return (g[Symbol.for('undici.globalDispatcher.2')] ?? g[Symbol.for('undici.globalDispatcher.1')])?.constructor;
}

const CACHE_NAMESPACE = 'cimd-document';
/** Lifetime of a document whose response names none (RFC 9111 §4.2.2 heuristic freshness). */
const CACHE_DEFAULT = 30;
const CACHE_MAX = 3600;

/**
 * Seconds to keep a fetched document (MCP client registration: SHOULD cache respecting HTTP
 * cache headers): `no-store` / `no-cache` / `max-age=0` → 0 (not kept, fetched again at the
 * next request); `max-age` up to 1 h; no directive → 30 s.
 */
export function cacheSeconds(cacheControl: string | null): number {
  if (cacheControl && /(?:^|,)\s*(?:no-store|no-cache)\s*(?:,|=|$)/i.test(cacheControl)) return 0;
  const match = cacheControl ? /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?\s*(?:,|$)/i.exec(cacheControl) : null;
  if (!match) return CACHE_DEFAULT;
  return Math.min(CACHE_MAX, Number(match[1]));
}

interface CachedDocument {
  body: string;
  expiresAt: number;
}

/**
 * The `fetch` given to oidc-provider: every outgoing request of the provider goes through it.
 * CIMD documents are cached in the shared kv store, so every instance (and a restarted one)
 * reuses a fetched document until its cache lifetime ends.
 */
/**
 * A host NAME resolving to a special-use address is refused before any connection: oidc-provider's
 * dispatcher checks the peer only once the TCP connection exists, which already reaches the
 * target. Its socket check still stands behind this one against DNS rebinding.
 */
async function refusePrivateResolution(url: string, logger: Logger): Promise<void> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (classifyIpAddress(host) !== undefined) return; // literals were checked by the client_id policy
  const answers = await lookup(host, { all: true, verbatim: true });
  const refused = answers.find((answer) => isSpecialUseAddress(answer.address));
  if (refused) {
    logger.warn('client_id metadata document refused: host resolves to a special-use address', { client_id: url, address: refused.address });
    throw new Error('client_id metadata document host resolves to a special-use address');
  }
}

/** oidc-provider's `fetchResponseBodyLimits` default for CIMD documents. */
const CIMD_BODY_LIMIT_BYTES = 5120;

/** The body as text, or undefined (and the stream cancelled) once it passes `limit` bytes. */
async function readAtMost(response: Response, limit: number): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function createProviderFetch(config: CimdConfig, logger: Logger, kv?: KeyValueStore, redirectUris?: RedirectUriOptions): FetchLike {
  let devDispatcher: unknown;
  if (config.allowPrivateNetwork && config.extraCaCertificates) {
    const Agent = undiciAgentClass();
    if (Agent) devDispatcher = new Agent({ connect: { ca: [...rootCertificates, config.extraCaCertificates] } });
  }

  return async (input, options) => {
    const url = String(input);
    const method = (options.method ?? 'GET').toUpperCase();
    if (kv && method === 'GET') {
      const cached = await kv.get<CachedDocument>(CACHE_NAMESPACE, url);
      const remaining = cached ? Math.floor((cached.expiresAt - Date.now()) / 1000) : 0;
      if (cached && remaining > 0) {
        return new Response(cached.body, {
          status: 200,
          headers: { 'content-type': 'application/json', 'cache-control': `max-age=${remaining}` },
        });
      }
    }
    if (config.allowPrivateNetwork) {
      // Dev only (loopback issuer enforced at start-up): drop oidc-provider's SSRF dispatcher.
      delete options.dispatcher;
      if (devDispatcher) options.dispatcher = devDispatcher;
    }
    if (!config.allowPrivateNetwork) await refusePrivateResolution(url, logger);
    const response = await fetch(url, options as unknown as RequestInit);
    const type = response.headers.get('content-type') ?? '';
    if (response.status !== 200 || !/json/i.test(type)) return response;
    // Read no further than oidc-provider would accept: a hostile host must not make us
    // buffer an unbounded document before the provider's own size check runs.
    const text = await readAtMost(response, CIMD_BODY_LIMIT_BYTES);
    if (text === undefined) {
      logger.warn('client_id metadata document refused: too large', { client_id: url, limit_bytes: CIMD_BODY_LIMIT_BYTES });
      throw new Error(`client_id metadata document exceeds ${CIMD_BODY_LIMIT_BYTES} bytes`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return new Response(text, { status: response.status, headers: response.headers });
    }
    if (body && typeof body === 'object' && !Array.isArray(body) && (body as { client_id?: unknown }).client_id === url) {
      const adjusted = JSON.stringify(adjustDocument(body as Record<string, unknown>, redirectUris));
      const seconds = cacheSeconds(response.headers.get('cache-control'));
      logger.info('fetched client_id metadata document', { client_id: url, cache_seconds: seconds });
      if (kv && seconds > 0) await kv.set(CACHE_NAMESPACE, url, { body: adjusted, expiresAt: Date.now() + seconds * 1000 } satisfies CachedDocument, seconds);
      const headers = new Headers(response.headers);
      headers.delete('content-length');
      headers.delete('content-encoding');
      // oidc-provider keeps the client in memory for the max-age it reads: one policy for both caches.
      headers.set('cache-control', `max-age=${seconds}`);
      headers.delete('expires');
      return new Response(adjusted, { status: 200, headers });
    }
    return new Response(text, { status: response.status, headers: response.headers });
  };
}
