import * as oauth from 'oauth4webapi';
import type { AuthorizationServerMetadata } from './discovery.js';
import { resourceFetch, type HttpDeps } from './http.js';
import { exportJWK, importJWK, type CryptoKey, type JWK } from 'jose';
import type { StoredDpopKey } from './store.js';

/** DPoP algorithms this client can generate keys for, in order of preference. */
const SUPPORTED = ['ES256', 'EdDSA', 'PS256', 'RS256'] as const;

/**
 * RFC 9449: the algorithm to use with an AS, or undefined when it does not advertise DPoP
 * (`dpop_signing_alg_values_supported`) or no advertised algorithm is supported.
 */
export function dpopAlgorithm(as: AuthorizationServerMetadata): string | undefined {
  const algs = as.dpop_signing_alg_values_supported;
  if (!Array.isArray(algs)) return undefined;
  return SUPPORTED.find((a) => algs.includes(a));
}

export interface DpopKey {
  handle: oauth.DPoPHandle;
  jkt: string;
}

export async function createDpopKey(alg: string, clientId: string): Promise<DpopKey> {
  const keyPair = await oauth.generateKeyPair(alg, { extractable: false });
  const handle = oauth.DPoP({ client_id: clientId } as oauth.Client, keyPair);
  return { handle, jkt: await handle.calculateThumbprint() };
}

/** JWK members that only a private key has (kept out of the public half). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'];

/**
 * A new key whose private JWK can be persisted (the CLI's store), with the handle built from the
 * re-imported, non-extractable private key.
 */
export async function createPersistableDpopKey(
  alg: string,
  clientId: string,
  issuer: string,
  resource: string,
): Promise<{ key: DpopKey; stored: StoredDpopKey }> {
  const pair = await oauth.generateKeyPair(alg, { extractable: true });
  const privateJwk = (await exportJWK(pair.privateKey)) as Record<string, unknown>;
  const key = await dpopKeyFromJwk(alg, privateJwk, clientId);
  return { key, stored: { issuer, resource, alg, private_jwk: privateJwk, jkt: key.jkt } };
}

/** Rebuilds a persisted key; the private key is imported non-extractable. */
export async function dpopKeyFromJwk(alg: string, privateJwk: Record<string, unknown>, clientId: string): Promise<DpopKey> {
  const publicJwk = Object.fromEntries(
    Object.entries(privateJwk).filter(([k]) => !PRIVATE_MEMBERS.includes(k) && k !== 'ext' && k !== 'key_ops'),
  );
  const privateKey = (await importJWK({ ...privateJwk, ext: false, key_ops: undefined } as JWK, alg)) as CryptoKey;
  const publicKey = (await importJWK({ ...publicJwk, ext: true } as JWK, alg)) as CryptoKey;
  const handle = oauth.DPoP({ client_id: clientId } as oauth.Client, { privateKey, publicKey });
  return { handle, jkt: await handle.calculateThumbprint() };
}

/**
 * Sends a request to the MCP server with a DPoP-bound access token: `Authorization: DPoP …` and a
 * fresh proof (htm, htu, iat, jti, ath) per request (RFC 9449 §7.1). A `use_dpop_nonce`
 * challenge is retried once with the server's nonce (RFC 9449 §9). Other challenges are returned
 * as the response for the caller's 401/403 handling.
 */
export async function dpopResourceRequest(
  original: { readonly method: string; readonly url: string; readonly headers: Headers; readonly signal?: AbortSignal | undefined },
  /** The request's body, fixed once by the caller for all its attempts (undefined: none). */
  sent: string | ArrayBuffer | undefined,
  accessToken: string,
  key: DpopKey,
  deps: HttpDeps,
): Promise<Response> {
  const method = original.method.toUpperCase();
  // a GET or HEAD request cannot carry a body, so it is undefined already
  const body = sent ?? null;
  const headers = new Headers(original.headers);
  headers.delete('authorization');
  headers.delete('dpop');
  for (let attempt = 0; ; attempt++) {
    try {
      return await oauth.protectedResourceRequest(accessToken, method, new URL(original.url), headers, body, {
        DPoP: key.handle,
        [oauth.customFetch]: (url, init) => resourceFetch(deps, url, init as RequestInit),
        [oauth.allowInsecureRequests]: true,
        ...(original.signal !== undefined && { signal: original.signal }),
      });
    } catch (err) {
      if (err instanceof oauth.WWWAuthenticateChallengeError) {
        if (attempt === 0 && oauth.isDPoPNonceError(err)) {
          await err.response.body?.cancel();
          continue;
        }
        return err.response;
      }
      throw err;
    }
  }
}
