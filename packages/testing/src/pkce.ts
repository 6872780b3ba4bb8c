import { randomBytes } from 'node:crypto';
import { pkceChallengeS256 } from '@mcp-auth-kit/protocol';

/** RFC 7636 S256 pair (the only method the AS accepts). */
export function createPkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: pkceChallengeS256(verifier) };
}

export function randomState(): string {
  return randomBytes(16).toString('base64url');
}
