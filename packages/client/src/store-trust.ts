import type { Stats } from 'node:fs';
import { ERR, McpAuthError } from './errors.js';

/** What the trust check reads of a path (an `lstat`, or an `fstat` of what was opened). */
export interface PathFacts {
  uid: number;
  mode: number;
  symbolicLink: boolean;
}

export function factsOf(st: Stats): PathFacts {
  return { uid: st.uid, mode: st.mode, symbolicLink: st.isSymbolicLink() };
}

/**
 * Why the token store must not trust a path, or undefined when it may (issue 46 item 9): the
 * store holds refresh tokens and DPoP private keys (OAuth 2.1 §7.1, MCP Token Theft), so its
 * directory, file and lock are its user's own — not a symbolic link (which could point anywhere),
 * owned by the current user, and writable by nobody else (someone who can write there can plant
 * tokens of their choosing, or replace the file). `uid` undefined: a platform without POSIX
 * owners (Windows), where only the symbolic-link rule applies.
 */
export function distrustReason(facts: PathFacts, uid: number | undefined): string | undefined {
  if (facts.symbolicLink) return 'is a symbolic link';
  if (uid === undefined) return undefined;
  if (facts.uid !== uid) return `is owned by uid ${facts.uid}, not by you (uid ${uid})`;
  if ((facts.mode & 0o022) !== 0)
    return `is writable by ${facts.mode & 0o020 ? 'its group' : 'other users'} (mode ${(facts.mode & 0o777).toString(8).padStart(3, '0')})`;
  return undefined;
}

export type StorePart = 'directory' | 'file' | 'lock';

/**
 * The mode a trusted store directory or file is given when group or others may read it (or list
 * or enter the directory), else undefined (review r46 F6): the file holds refresh tokens, DPoP
 * private keys and client secrets, so only its user may read it (OAuth 2.1 §7.1). Such a path is
 * its user's own and writable by nobody else ({@link distrustReason} finds nothing), so nobody
 * could have planted its content: it is repaired (group and other permissions removed) rather than
 * refused. `uid` undefined: no POSIX modes (Windows), nothing to repair.
 */
export function privateMode(facts: PathFacts, uid: number | undefined): number | undefined {
  if (uid === undefined || distrustReason(facts, uid) !== undefined) return undefined;
  return (facts.mode & 0o077) !== 0 ? facts.mode & 0o700 : undefined;
}

const told = new Set<string>();

/**
 * Applies {@link privateMode} to a trusted store directory or file with `chmod` (a file through
 * the handle it was opened with), saying so through `tell` once per path and process.
 */
export async function makePrivate(
  part: 'directory' | 'file',
  path: string,
  facts: PathFacts,
  chmod: (mode: number) => Promise<void>,
  tell: (message: string) => void,
  uid = currentUid(),
): Promise<void> {
  const mode = privateMode(facts, uid);
  if (mode === undefined) return;
  await chmod(mode);
  if (told.has(path)) return;
  told.add(path);
  const octal = (m: number) => (m & 0o777).toString(8).padStart(3, '0');
  tell(
    `mcp-auth-kit: the token store ${part} ${path} was readable by ${facts.mode & 0o070 ? 'its group' : 'other users'} (mode ${octal(facts.mode)}); changed it to ${octal(mode)}`,
  );
}

const FIX: Record<StorePart, string> = {
  directory: 'use a directory of your own (--home or $MCP_AUTH_KIT_HOME) or make it yours: chown, then chmod 700',
  file: 'move it away (you will log in again) or make it yours: chown, then chmod 600',
  lock: 'remove it once no other mcp-auth-kit process runs',
};

/** Throws `MCP_AUTH_STORE_UNSAFE` naming the path and the fix when {@link distrustReason} finds one. */
export function assertTrusted(part: StorePart, path: string, facts: PathFacts, uid = currentUid()): void {
  const reason = distrustReason(facts, uid);
  if (reason) throw new McpAuthError(ERR.STORE_UNSAFE, `the token store ${part} ${path} ${reason}; refusing to use it: ${FIX[part]}`);
}

export function currentUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}
