/**
 * Usernames for accounts made on someone else's word (upstream sign-up, ID-JAG just in time):
 * only a candidate that is already a canonical, display-safe name is used (never a repaired
 * one, so a remote party cannot plant a lookalike), and a taken name gets a suffix.
 */
import { isUsername, MAX_USERNAME_LENGTH } from '@mcp-auth-kit/protocol';

/** The first valid candidate, then that name with each suffix (`name-suffix`), all valid. */
export function usernameChoices(candidates: readonly unknown[], suffixes: readonly string[]): string[] {
  const base = candidates.find(isUsername);
  if (base === undefined) return [];
  // Room for "-suffix" within the shorter bound, whatever the base.
  const room = MAX_USERNAME_LENGTH - 1 - Math.max(0, ...suffixes.map((s) => s.length));
  const stem = [...base].slice(0, room).join('');
  return [base, ...suffixes.map((s) => `${stem}-${s}`)].filter(isUsername);
}

/**
 * The username candidates an upstream sign-up offers from its ID Token claims. An e-mail-like
 * name (with `@`) is someone's address: taken only when the provider says `email_verified: true`
 * for that same address (OpenID Connect Core §5.1, §5.7), so nobody signs up under another
 * person's address; otherwise the caller falls back to a provider-scoped name.
 */
export function upstreamNameCandidates(claims: Readonly<Record<string, unknown>>): unknown[] {
  const verified = claims.email_verified === true && typeof claims.email === 'string' ? claims.email : undefined;
  const emailLike = (v: unknown) => typeof v === 'string' && v.includes('@');
  return [claims.preferred_username, claims.email].filter(
    (v) => typeof v === 'string' && (!emailLike(v) || (verified !== undefined && v === verified)),
  );
}
