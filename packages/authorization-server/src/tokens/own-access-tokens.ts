/**
 * The checks of one of OUR access tokens presented back to us: RFC 9068 §4 (our `typ`, our issuer,
 * our keys, not expired, the claims we always set), and whether the grant it names is still live.
 * A JWT is self-contained, so revocation is the grant's end: its refresh token revoked (RFC 7009),
 * reused after rotation or presented by another client (RFC 9700 §4.14.2), its code replayed, the
 * approval withdrawn on the account page or by the operator. Introspection (jwt-introspection.ts)
 * and the token exchange's subject token (grants/token-exchange/) ask the same two questions here.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type Provider from 'oidc-provider';

/** Private claim of a user's access token: the grant it was issued from. */
export const GRANT_CLAIM = 'grant_id';

/** A verified token: who it is for and whom it names. */
export interface OwnAccessToken {
  payload: JWTPayload;
  clientId: string;
  /** Undefined for a client credentials token (no user, the client is the subject). */
  grantId?: string;
}

function publicJwk(jwk: JWK): JWK {
  const exported = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }).export({ format: 'jwk' }) as JWK;
  return { ...exported, ...(jwk.kid && { kid: jwk.kid }), ...(jwk.alg && { alg: jwk.alg }), use: 'sig' };
}

/**
 * A verifier of our access tokens: signature by one of the provider's keys (private parts
 * ignored: what `/jwks` publishes), `typ: at+jwt`, our `iss`, `exp` (no leeway: we are the clock),
 * the claims we always set, and the shape of `client_id` and `grant_id`. Undefined: not one of
 * ours, or no longer valid.
 */
export function createOwnAccessTokenVerifier(
  issuer: string,
  signingKeys: readonly JWK[],
): (token: string) => Promise<OwnAccessToken | undefined> {
  const keys = signingKeys.map(publicJwk);
  const keySet = createLocalJWKSet({ keys });
  const algorithms = [...new Set(keys.map((k) => k.alg ?? 'ES256'))];
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keySet, {
        issuer,
        typ: 'at+jwt',
        algorithms,
        requiredClaims: ['exp', 'iat', 'jti', 'sub', 'aud', 'client_id'],
      }));
    } catch {
      return undefined;
    }
    const clientId = payload.client_id;
    const grantId = payload[GRANT_CLAIM];
    if (typeof clientId !== 'string' || (grantId !== undefined && typeof grantId !== 'string')) return undefined;
    // Client credentials tokens have no grant and name the client as subject.
    if (grantId === undefined && payload.sub !== clientId) return undefined;
    return { payload, clientId, ...(grantId !== undefined && { grantId }) };
  };
}

/** The token's grant still exists, for this client and this user (it ends when revoked). */
export async function grantIsLive(provider: Provider, token: OwnAccessToken): Promise<boolean> {
  if (token.grantId === undefined) return false;
  const grant = (await provider.Grant.find(token.grantId)) as { clientId?: string; accountId?: string } | undefined;
  return !!grant && typeof token.payload.sub === 'string' && grant.clientId === token.clientId && grant.accountId === token.payload.sub;
}
