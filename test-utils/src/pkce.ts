import { createHash, randomBytes } from 'node:crypto';

/** A PKCE verifier (32 random bytes, base64url: 43 characters) and its S256 challenge (RFC 7636 §4.1, §4.2). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256Challenge(verifier) };
}

/** The S256 code challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))) (RFC 7636 §4.2). */
export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}
