import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { RESOURCE } from './harness.js';

export interface ProofKey {
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  privateJwk: JWK;
  jkt: string;
}

export async function proofKey(alg = 'ES256'): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { alg, privateKey, publicJwk, privateJwk: await exportJWK(privateKey), jkt: await calculateJwkThumbprint(publicJwk) };
}

export function ath(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

export interface ProofOptions {
  key: ProofKey;
  /** The access token (sets `ath`). */
  token?: string;
  htm?: string;
  htu?: string;
  /** Seconds since the epoch. */
  iat?: number;
  nonce?: string;
  /** Claim overrides; undefined removes a claim. */
  claims?: Record<string, unknown>;
  /** Header overrides; undefined removes a member. */
  header?: Record<string, unknown>;
  /** Sign with this key instead of `key` (the header still carries `key`'s jwk). */
  signWith?: CryptoKey;
}

/** A DPoP proof JWT (RFC 9449 §4.2), valid by default for POST to the test resource. */
export async function makeProof(o: ProofOptions): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: randomUUID(),
    htm: o.htm ?? 'POST',
    htu: o.htu ?? RESOURCE,
    iat: o.iat ?? Math.floor(Date.now() / 1000),
    ...(o.token !== undefined ? { ath: ath(o.token) } : {}),
    ...(o.nonce !== undefined ? { nonce: o.nonce } : {}),
  };
  for (const [k, v] of Object.entries(o.claims ?? {})) {
    if (v === undefined) delete claims[k];
    else claims[k] = v;
  }
  const header: Record<string, unknown> = { alg: o.key.alg, typ: 'dpop+jwt', jwk: o.key.publicJwk };
  for (const [k, v] of Object.entries(o.header ?? {})) {
    if (v === undefined) delete header[k];
    else header[k] = v;
  }
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(o.signWith ?? o.key.privateKey);
}

/** An unsigned JWT with the given header (for `alg: none`). */
export function unsignedJwt(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${enc(header)}.${enc(claims)}.`;
}
