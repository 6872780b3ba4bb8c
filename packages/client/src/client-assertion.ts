import { SignJWT } from 'jose';
import { toCryptoKey, type PrivateKeyInput } from './oauth.js';
import { DEFAULTS } from './config/defaults.js';

/** Lifetime of a self-signed assertion: RFC 7523 §3 item 4 wants a short one; replays are also refused by `jti`. */
export const CLIENT_ASSERTION_LIFETIME_SECONDS = 60;

/**
 * An RFC 7523 §2.1 authorization grant the client signs itself (the client credentials extension's
 * recommended "JWT Bearer Assertion"): `iss` = `sub` = the client id (§3 items 1 and 2: the client
 * acts for itself), `aud` = the AS issuer (§3 item 3), `iat`, a short `exp` (item 4) and a fresh
 * `jti` (item 7, for the AS's replay check). `typ` is plain `JWT`, so an AS tells it apart from an
 * ID-JAG (`oauth-id-jag+jwt`).
 */
export async function signClientAssertion(clientId: string, audience: string, privateKey: PrivateKeyInput): Promise<string> {
  const { key, kid } = await toCryptoKey(privateKey);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: privateKey.alg ?? DEFAULTS.privateKeyAlg, typ: 'JWT', ...(kid !== undefined && { kid }) })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + CLIENT_ASSERTION_LIFETIME_SECONDS)
    .setJti(crypto.randomUUID())
    .sign(key);
}
