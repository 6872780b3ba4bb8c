/**
 * Client ID Metadata Documents on top of oidc-provider's draft-02 feature: the MCP trust
 * policy (allowed / denied hosts), the dev-only private-network allowance (oidc-provider's own dispatcher refuses every non-public address, loopback included) and
 * the document adjustments that must happen before oidc-provider validates it.
 */
import type { CimdConfig } from '../config/types.js';
import type { Logger } from '../ops/logger.js';
import type { KeyValueStore } from '../storage/types.js';
import { checkEgressHost, type RedirectUriOptions, urlHost } from '@mcp-auth-kit/protocol';
import { clientUrlEgressPolicy, createEgressFetch } from '../http/egress.js';
import { hostMatches, looksNative, parseUrl } from '../http/urls.js';

export type FetchLike = (url: string | URL, options: Omit<RequestInit, 'dispatcher'> & { dispatcher?: unknown }) => Promise<Response>;

/** Why a client_id URL is refused by the trust policy, or undefined when it may be fetched. */
export function cimdRefusal(clientId: string, config: CimdConfig): string | undefined {
  const url = parseUrl(clientId);
  if (!url || url.protocol !== 'https:') return 'client_id URL must use https';
  if (url.pathname === '/' || url.pathname === '') return 'client_id URL must contain a path';
  if (url.username || url.password) return 'client_id URL must not contain credentials';
  const host = urlHost(url);
  // `app.example.` is the same host as `app.example` but another client_id string: one client, one id
  if (host.endsWith('.')) return 'client_id URL host must not end in a dot';
  if (config.deniedHosts?.some((p) => hostMatches(p, host))) return `host ${host} is denied by policy`;
  if (config.allowedHosts?.length && !config.allowedHosts.some((p) => hostMatches(p, host))) {
    return `host ${host} is not in the allowed hosts`;
  }
  // The egress policy decides literals and loopback names here, without a connection; names are
  // decided on their resolved addresses when the document is fetched.
  const decision = checkEgressHost(host, clientUrlEgressPolicy(config));
  return decision && !decision.ok ? decision.reason : undefined;
}

/**
 * Adjusts a fetched CIMD document: clients publishing only loopback / custom-scheme redirect
 * URIs without `application_type` are native (oidc-provider defaults application_type to web, and only native clients get RFC 8252 §7.3 any-port loopback).
 */
export function adjustDocument(doc: Record<string, unknown>, options?: RedirectUriOptions): Record<string, unknown> {
  const uris = Array.isArray(doc.redirect_uris) ? (doc.redirect_uris as unknown[]) : [];
  if (doc.application_type === undefined && uris.every((u) => typeof u === 'string') && looksNative(uris as string[], options)) {
    return { ...doc, application_type: 'native' };
  }
  return doc;
}

/**
 * The shared kv namespace of fetched CIMD documents. Only {@link createCimdFetch} writes it: a
 * document fetched for any other purpose (a client's `jwks_uri`, …) never lands here, whatever
 * `client_id` its JSON claims (test/security/network-cache-inventory.test.ts).
 */
export const CIMD_CACHE_NAMESPACE = 'cimd-document';
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

/**
 * The CIMD document fetcher, and the only writer of the CIMD cache (MCP client registration
 * §Client ID Metadata Documents; draft-ietf-oauth-client-id-metadata-document §6): one GET
 * of exactly the `client_id` URL, redirects never followed (a 3xx goes back to oidc-provider,
 * which refuses it), only for a URL the trust policy accepts, and kept only when the document's
 * `client_id` is that URL. It goes through the egress policy for client-named URLs (egress.ts),
 * which checks the resolved address before connecting — oidc-provider's own dispatcher checks
 * the peer only once connected. Documents are cached in the shared kv store, so every instance
 * (and a restarted one) reuses a fetched document until its cache lifetime ends.
 * provider-fetch.ts hands it oidc-provider's CIMD requests and nothing else.
 */
export function createCimdFetch(config: CimdConfig, logger: Logger, kv?: KeyValueStore, redirectUris?: RedirectUriOptions): FetchLike {
  const egressFetch = createEgressFetch({
    policy: clientUrlEgressPolicy(config),
    logger,
    purpose: 'client_metadata',
    extraCaCertificates: config.allowPrivateNetwork ? config.extraCaCertificates : undefined,
  });

  return async (input, options) => {
    const url = String(input);
    if ((options.method ?? 'GET').toUpperCase() !== 'GET') throw new TypeError('a client_id metadata document is fetched with GET only');
    // allowFetch refused such a URL already; never fetched (nor cached) on any other path either.
    const refusal = cimdRefusal(url, config);
    if (refusal) throw new TypeError(`client_id metadata document fetch refused: ${refusal}`);
    if (kv) {
      const cached = await kv.get<CachedDocument>(CIMD_CACHE_NAMESPACE, url);
      const remaining = cached ? Math.floor((cached.expiresAt - Date.now()) / 1000) : 0;
      if (cached && remaining > 0) {
        return new Response(cached.body, {
          status: 200,
          headers: { 'content-type': 'application/json', 'cache-control': `max-age=${remaining}` },
        });
      }
    }
    const response = await egressFetch(url, { ...options, redirect: 'manual' });
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
      if (kv && seconds > 0) {
        const entry: CachedDocument = { body: adjusted, expiresAt: Date.now() + seconds * 1000 };
        await kv.set(CIMD_CACHE_NAMESPACE, url, entry, seconds);
      }
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

/**
 * The cached document of a CIMD client, as the operator console shows it (its name, redirect
 * URIs): read only, so the cache keeps one writer (createCimdFetch). Undefined when not cached.
 */
export async function cachedCimdDocument(kv: KeyValueStore, clientId: string): Promise<Record<string, unknown> | undefined> {
  const cached = await kv.get<CachedDocument>(CIMD_CACHE_NAMESPACE, clientId);
  if (!cached) return undefined;
  try {
    const doc = JSON.parse(cached.body) as unknown;
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Drops a client's cached document (the console deleted the client): the next use fetches it anew. */
export async function forgetCimdDocument(kv: KeyValueStore, clientId: string): Promise<void> {
  await kv.delete(CIMD_CACHE_NAMESPACE, clientId);
}
