import { createHash } from 'node:crypto';

/**
 * The PKCE S256 code challenge, BASE64URL(SHA-256(ASCII(code_verifier))) (RFC 7636 §4.2),
 * computed in the calling turn: WebCrypto's digest would be a round trip through the thread
 * pool, for a hash of 43 to 128 bytes.
 */
export function pkceChallengeS256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
