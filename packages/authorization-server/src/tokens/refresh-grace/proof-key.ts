/**
 * The DPoP key of a token request, as a JWK thumbprint (RFC 7638), read once oidc-provider has
 * validated the proof. The provider keeps its own validation result to itself; by the time the
 * grace checkpoint runs (inside `findAccount`, after the provider's DPoP checks of the refresh)
 * the `DPoP` header of this very request has been verified — signature, `htm`, `htu`, `iat`,
 * nonce and replay — or the request has already failed. So the key in its header is the key
 * the proof was made with.
 */
import { calculateJwkThumbprint, decodeProtectedHeader, type JWK } from 'jose';
import type { KoaContextWithOIDC } from 'oidc-provider';

/** Thumbprint of the proof's key, or undefined when the request carries no proof. */
export async function proofKeyThumbprint(ctx: KoaContextWithOIDC): Promise<string | undefined> {
  const proof = ctx.get('DPoP');
  if (!proof) return undefined;
  try {
    const { jwk } = decodeProtectedHeader(proof);
    if (jwk && typeof jwk === 'object') return await calculateJwkThumbprint(jwk as JWK);
  } catch {
    // only with DPoP turned off (the provider then ignores the header): no key to speak of
  }
  return 'unusable-proof';
}
