/**
 * The console's form tokens (synchronizer tokens, OWASP CSRF cheat sheet): each rendered page
 * gets a random token kept in the store, bound to the operator's browser session; a POST must
 * carry one that was issued to the same session, and each is good for one change only (a
 * replayed form is refused). A cross-site page can neither read nor guess it.
 */
import { randomBytes } from 'node:crypto';
import type { KeyValueStore } from '../storage/types.js';

const ISSUED = 'console-form';
const USED = 'console-form-used';
/** How long a page's forms stay usable. */
const TTL_SECONDS = 3600;
const SHAPE = /^[A-Za-z0-9_-]{32}$/;

export async function issueFormToken(kv: KeyValueStore, sessionUid: string): Promise<string> {
  const token = randomBytes(24).toString('base64url');
  await kv.set(ISSUED, token, sessionUid, TTL_SECONDS);
  return token;
}

/**
 * Spends a form token: 'ok' once for a token issued to this session; 'replayed' when it was
 * already spent; 'invalid' when unknown, expired or issued to another session.
 */
export async function spendFormToken(kv: KeyValueStore, token: unknown, sessionUid: string): Promise<'ok' | 'replayed' | 'invalid'> {
  if (typeof token !== 'string' || !SHAPE.test(token)) return 'invalid';
  const owner = await kv.get<string>(ISSUED, token);
  if (owner !== sessionUid) return 'invalid';
  // The counter is atomic in every store: of two concurrent submissions only one sees 1.
  return (await kv.increment(USED, token, 1, TTL_SECONDS)) === 1 ? 'ok' : 'replayed';
}
