/**
 * One-time change tokens of the console (CSRF and replay, issue 44): a random token bound to the
 * signed-in session, kept in the shared kv store, good for one change within ten minutes. A form
 * or request sent twice (a replay) finds its token spent and is refused.
 */
import { randomBytes } from 'node:crypto';
import type { KeyValueStore } from '../storage/types.js';

const NAMESPACE = 'console-change-token';
export const CHANGE_TOKEN_TTL_SECONDS = 600;

export async function issueChangeToken(kv: KeyValueStore, sessionUid: string): Promise<string> {
  const token = randomBytes(24).toString('base64url');
  await kv.set(NAMESPACE, token, { sessionUid }, CHANGE_TOKEN_TTL_SECONDS);
  return token;
}

/**
 * True once for a live token of this session. The delete comes first: of two requests racing with
 * one token, at most the one that still read it counts (kv delete then read would let both pass).
 */
export async function spendChangeToken(kv: KeyValueStore, sessionUid: string, token: unknown): Promise<boolean> {
  if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{32}$/.test(token)) return false;
  const count = await kv.increment(NAMESPACE, `spent:${token}`, 1, CHANGE_TOKEN_TTL_SECONDS);
  if (count !== 1) return false;
  const entry = await kv.get<{ sessionUid: string }>(NAMESPACE, token);
  await kv.delete(NAMESPACE, token);
  return entry?.sessionUid === sessionUid;
}
