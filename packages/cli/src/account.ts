import { displaySafeText } from '@mcp-auth-kit/protocol';
import type { SignedInAccount } from '@mcp-auth-kit/client';

/** Longest display name shown, in code points: a name is a hint, the `sub` is the account. */
export const MAX_SHOWN_NAME_LENGTH = 64;

/** A `sub` as it is when it is plain printable ASCII, else as a JSON string with every other character escaped. */
function shownSub(sub: string): string {
  if (/^[\x21-\x7e]+$/.test(sub) && !/["()\\]/.test(sub)) return sub;
  return JSON.stringify(sub).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function issuerHost(issuer: string): string {
  try {
    return new URL(issuer).host;
  } catch {
    return issuer;
  }
}

/**
 * How the CLI names a signed-in account. It leads with what the authorization server vouches for
 * (its host and the `sub`), then the display name, quoted, through the one display rule
 * (`displaySafeText`: white space runs of any kind made one space, invisibles and mark stacks
 * dropped) and bounded. A name is the server's free text: put first, "alice (sub 2482…)" would read
 * as another account, and padding of wide spaces would push the real `sub` off the screen.
 */
export function accountLabel(account: SignedInAccount, issuer: string): string {
  const where = `at ${issuerHost(issuer)} as sub ${shownSub(account.sub)}`;
  const safe = displaySafeText(account.name, MAX_SHOWN_NAME_LENGTH + 1);
  if (safe === undefined) return where;
  const name = [...safe].length > MAX_SHOWN_NAME_LENGTH ? `${[...safe].slice(0, MAX_SHOWN_NAME_LENGTH).join('')}…` : safe;
  return `${where} (${JSON.stringify(name)})`;
}
