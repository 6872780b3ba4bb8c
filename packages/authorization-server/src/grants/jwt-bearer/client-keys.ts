/**
 * The keys a configured client registered for its assertions (RFC 7591 §2 `jwks` / `jwks_uri`):
 * the inline set, or the `jwks_uri` fetched through the AS egress policy for client-named URLs
 * (provider-fetch.ts `createJwksUriFetch`, the fetcher oidc-provider's `private_key_jwt` uses),
 * cached and refetched by jose on an unknown `kid`. Only public asymmetric keys count: a client's
 * `oct` key (a shared secret) or a private key never verifies its assertions.
 */
import { createLocalJWKSet, createRemoteJWKSet, customFetch, type JWK, type JWTVerifyGetKey } from 'jose';
import type { FetchLike } from '../../clients/cimd.js';

/** The client fields read here (oidc-provider's Client instance, camelCase metadata). */
export interface KeyedClient {
  clientId: string;
  jwks?: { keys?: unknown } | undefined;
  jwksUri?: string | undefined;
}

const isPublicAsymmetric = (k: unknown): k is JWK =>
  !!k && typeof k === 'object' && !('d' in k) && typeof (k as JWK).kty === 'string' && (k as JWK).kty !== 'oct';

/** Whether the client registered keys this grant can verify with. */
export function hasRegisteredKeys(client: KeyedClient): boolean {
  if (typeof client.jwksUri === 'string' && client.jwksUri) return true;
  const keys = client.jwks?.keys;
  return Array.isArray(keys) && keys.some(isPublicAsymmetric);
}

/** One key set per client and registration (a changed `jwks` / `jwks_uri` gets a new one). */
export function createClientKeys(jwksUriFetch: FetchLike): (client: KeyedClient) => JWTVerifyGetKey | undefined {
  const cache = new Map<string, { source: string; keys: JWTVerifyGetKey }>();
  return (client) => {
    if (!hasRegisteredKeys(client)) return undefined;
    const source = client.jwksUri ? `uri ${client.jwksUri}` : `inline ${JSON.stringify(client.jwks)}`;
    const cached = cache.get(client.clientId);
    if (cached?.source === source) return cached.keys;
    const keys = client.jwksUri
      ? createRemoteJWKSet(new URL(client.jwksUri), {
          timeoutDuration: 5000,
          cooldownDuration: 30_000,
          cacheMaxAge: 10 * 60_000,
          [customFetch]: (url: string, init: RequestInit) => jwksUriFetch(url, init),
        })
      : createLocalJWKSet({ keys: (client.jwks!.keys as unknown[]).filter(isPublicAsymmetric) });
    cache.set(client.clientId, { source, keys });
    return keys;
  };
}
