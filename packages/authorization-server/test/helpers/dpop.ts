import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/** A client's DPoP key pair with its JWK thumbprint (RFC 9449 §6.1 `jkt`). */
export interface Key {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

export async function dpopKey(): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

/** A DPoP proof (RFC 9449 §4.2) for a POST to `htu`, with the server's nonce when given. */
export function proof(key: Key, htu: string, nonce?: string, claims: { htm?: string; iat?: number } = {}): Promise<string> {
  return new SignJWT({ jti: randomUUID(), htm: 'POST', htu, iat: Math.floor(Date.now() / 1000), ...(nonce ? { nonce } : {}), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })
    .sign(key.privateKey);
}
