import type { VerifiedAccessToken } from './types.js';

/** Freezes a JSON value and everything in it (claims are parsed JSON: no cycles, no class instances). */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const member of Object.values(value)) deepFreeze(member);
}

/**
 * One verification serves many requests (the cache, and concurrent requests sharing one
 * verification), and each request's `req.auth.extra.claims` is the verification's own claims
 * object: frozen, so no handler can change what later requests are checked against (`cnf` for
 * DPoP binding, `grant_id` for revocation, the scopes). Done once per verification, never per hit.
 */
export function freezeVerification(verified: VerifiedAccessToken): VerifiedAccessToken {
  deepFreeze(verified.claims);
  Object.freeze(verified.scopes);
  return Object.freeze(verified);
}
