import { JWS_COMPACT } from '@mcp-auth-kit/protocol';
import { ResourceServerError } from './errors.js';
import { introspectAccessToken } from './introspection.js';
import { KeyStore } from './key-store.js';
import { ConnectionTokenHashes, TokenCache, tokenHash } from './token-cache.js';
import { freezeVerification } from './frozen-verification.js';
import { verifyCompactJwt, type JwtVerifyOptions } from './verify-jwt.js';
import type { ResolvedIntrospectionOptions, ResolvedOptions } from './config/types.js';
import type { AccessTokenVerifier, VerifiedAccessToken } from './types.js';

/** The issuers' metadata and keys as the options say (shared with the third-party exchanges, which read `token_endpoint`). */
export function createKeyStore(options: ResolvedOptions): KeyStore {
  return new KeyStore({
    fetch: options.fetch,
    timeoutMs: options.jwks.timeoutMs,
    cooldownMs: options.jwks.cooldownMs,
    cacheMaxAgeMs: options.jwks.cacheMaxAgeMs,
    failureCooldownMs: options.jwks.failureCooldownMs,
    jwksUris: options.jwks.uris,
    now: options.now,
  });
}

/**
 * The verification behind the cache: a JWT locally (RFC 9068), then also by introspection with
 * `introspectJwt`; an opaque token by introspection (RFC 7662), or refused without it.
 */
function uncachedVerifier(options: ResolvedOptions, keys: KeyStore): (token: string) => Promise<VerifiedAccessToken> {
  // built once: with the cache off this path runs for every request
  const jwtOptions: JwtVerifyOptions = {
    resource: options.resource,
    issuers: options.authorizationServers,
    getKeys: (issuer) => keys.resolvedKeys(issuer) ?? keys.keys(issuer),
    algorithms: options.algorithms,
    clockTolerance: options.clockTolerance,
    now: options.now,
  };

  const introspect = (token: string, introspection: ResolvedIntrospectionOptions) =>
    introspectAccessToken(token, introspection, {
      resource: options.resource,
      issuers: options.authorizationServers,
      clockTolerance: options.clockTolerance,
      now: options.now,
      fetch: options.fetch,
      timeoutMs: introspection.timeoutMs,
    });

  // Not async, and no await of our own around jose's verification: with the cache off this runs for every
  // request, and each extra promise costs (async hooks included) on top of the signature check.
  function verifyUncached(token: string): Promise<VerifiedAccessToken> {
    const { introspection } = options;
    if (JWS_COMPACT.test(token)) {
      if (!introspection?.introspectJwt) return verifyCompactJwt(token, jwtOptions);
      return verifyJwtThenIntrospect(token, introspection);
    }
    if (introspection === undefined) return Promise.reject(new ResourceServerError('opaque_token_unsupported'));
    return introspect(token, introspection);
  }

  async function verifyJwtThenIntrospect(token: string, introspection: ResolvedIntrospectionOptions): Promise<VerifiedAccessToken> {
    const verified = await verifyCompactJwt(token, jwtOptions);
    // Both must hold: the token is ours (locally) and still live (the AS's word). The
    // introspection answer is what is kept, so the cache honours `cacheTtlSeconds`.
    const live = await introspect(token, introspection);
    if ((live.jti !== undefined && live.jti !== verified.jti) || live.clientId !== verified.clientId) {
      throw new ResourceServerError('introspection_mismatch', { detail: { message: 'the answer is about another token' } });
    }
    return live;
  }

  return verifyUncached;
}

export function createAccessTokenVerifier(options: ResolvedOptions, keys: KeyStore = createKeyStore(options)): AccessTokenVerifier {
  const cache = new TokenCache(options.cacheMaxEntries, options.now);
  const verifyUncached = uncachedVerifier(options, keys);

  // Concurrent requests with the same uncached token share one verification (one introspection
  // call). Keyed by the token itself: an entry lives only while its verification runs (whose
  // closure holds the token anyway), so hashing is kept for the long-lived cache, and a server
  // with the cache off hashes nothing.
  const inFlight = new Map<string, Promise<VerifiedAccessToken>>();
  const connectionHashes = new ConnectionTokenHashes();
  // only introspection answers have a TTL of their own (`exp` bounds a JWT's cache entry)
  const introspectionTtlMs = options.introspection === undefined ? undefined : options.introspection.cacheTtlSeconds * 1000;

  return {
    cached: (token, connection) => (cache.enabled ? cache.get(token, connectionHashes.keyFor(token, connection)) : undefined),
    verify(token) {
      try {
        // one SHA-256 per request with the cache on (lookup and store share it), none with it off
        const key = cache.enabled ? tokenHash(token) : undefined;
        if (key !== undefined) {
          const cached = cache.get(token, key);
          if (cached !== undefined) return Promise.resolve(cached);
        }
        const pending = inFlight.get(token);
        if (pending !== undefined) return pending;
        const verification = verifyUncached(token).then(
          (result) => {
            try {
              const verified = freezeVerification(result);
              // stored before the in-flight entry goes: a later request finds one or the other
              cache.set(verified, verified.source === 'introspection' ? introspectionTtlMs : undefined, key);
              return verified;
            } finally {
              inFlight.delete(token);
            }
          },
          (err: unknown) => {
            inFlight.delete(token);
            throw err;
          },
        );
        inFlight.set(token, verification);
        return verification;
      } catch (err) {
        return Promise.reject(err);
      }
    },
    clear() {
      cache.clear();
      keys.clear();
    },
    get cacheSize() {
      return cache.size;
    },
  };
}
