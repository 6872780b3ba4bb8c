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
