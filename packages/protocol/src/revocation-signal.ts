/**
 * The revocation signal between authorization servers and resource servers sharing one Redis:
 * when a grant ends (RFC 7009 revocation, refresh-token reuse, authorization-code replay, a user
 * or an operator withdrawing the approval), the AS writes one key per grant, kept for the longest
 * access-token lifetime so a replica that starts later still sees it, and publishes the grant id
 * on one channel so running replicas learn it at once. Both sides build the names here, so a
 * writer and a reader never disagree on them.
 */

/** Default key prefix (a deployment sharing one Redis between several kits sets its own). */
export const DEFAULT_REVOCATION_PREFIX = 'mcp-auth-kit:';

/** Pub/sub channel carrying revoked grant ids. */
export function revocationChannel(prefix: string = DEFAULT_REVOCATION_PREFIX): string {
  return `${prefix}revoked-grants`;
}

/** Key marking one revoked grant (its value: {@link revokedGrantValue}; its TTL: until then). */
export function revokedGrantKey(grantId: string, prefix: string = DEFAULT_REVOCATION_PREFIX): string {
  return `${revokedGrantKeyPrefix(prefix)}${grantId}`;
}

/** Every {@link revokedGrantKey} starts with this (`SCAN MATCH <this>*` finds them all). */
export function revokedGrantKeyPrefix(prefix: string = DEFAULT_REVOCATION_PREFIX): string {
  return `${prefix}revoked-grant:`;
}

/**
 * Grant ids are oidc-provider's opaque ids (base64url); anything else read from the channel is
 * ignored, so a stray publisher cannot fill memory with arbitrary strings.
 */
export function isGrantId(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(value);
}

/**
 * The value of a {@link revokedGrantKey}: the epoch second until which the grant must stay known
 * (when every token of the grant has expired, clock tolerance included). A resource server keeps
 * the grant at least that long, even when the key disappears first (a Redis flush or restart).
 */
export function revokedGrantValue(untilEpochSeconds: number): string {
  return String(Math.ceil(untilEpochSeconds));
}

/** The epoch second a {@link revokedGrantValue} names, or undefined (an older writer's `1`, junk). */
export function revokedGrantUntil(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^[1-9][0-9]{9,10}$/.test(value)) return undefined;
  return Number(value);
}
