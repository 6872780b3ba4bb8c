import { randomBytes } from 'node:crypto';
import { pkceChallengeS256 } from '@mcp-auth-kit/protocol';

/** A PKCE verifier (32 random bytes, base64url: 43 characters) and its S256 challenge (RFC 7636 §4.1, §4.2). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: pkceChallengeS256(verifier) };
}
