/** Signing and cookie keys for the console: kid, algorithm, status and times; never key material. */
import type { StoredSigningKey } from '../storage/types.js';
import type { AdminContext } from './context.js';
import { type AdminService, AdminServiceError, type SigningKeyView } from './types.js';

export const DEFAULT_RETIRE_AFTER_SECONDS = 86400;

export function signingKeyView(k: StoredSigningKey): SigningKeyView {
  return {
    kid: String(k.jwk.kid),
    ...(typeof k.jwk.alg === 'string' && { alg: k.jwk.alg }),
    status: k.status,
    createdAt: k.createdAt,
    ...(k.retireAfter !== undefined && { retireAfter: k.retireAfter }),
  };
}

/**
 * How long the previous key stays published: resource servers verify a token with the key it
 * names, so dropping it before the longest token lifetime refuses tokens still valid.
 */
export function retireAfter(requested: number | undefined, longestTokenLifetime: number): number {
  if (requested === undefined) return Math.max(DEFAULT_RETIRE_AFTER_SECONDS, longestTokenLifetime);
  if (!Number.isSafeInteger(requested) || requested < 0)
    throw new AdminServiceError('retireAfterSeconds must be a whole number of seconds', 'invalid_request');
  if (requested < longestTokenLifetime)
    throw new AdminServiceError(
      `retireAfterSeconds ${requested} is too short: the previous key must stay published for at least ${longestTokenLifetime} s, the longest lifetime of a token it signed`,
      'invalid_request',
    );
  return requested;
}

type KeyOperations = Pick<AdminService, 'listSigningKeys' | 'rotateSigningKeys' | 'cookieKeys' | 'rotateCookieKeys'>;

export function keyOperations({ store, longestTokenLifetime, record }: AdminContext): KeyOperations {
  return {
    listSigningKeys: async () => (await store.keys.signingKeys()).map(signingKeyView),
    async rotateSigningKeys(actor, retireAfterSeconds) {
      const keys = await store.keys.rotateSigningKeys(retireAfter(retireAfterSeconds, longestTokenLifetime));
      const views = keys.map(signingKeyView);
      await record(actor, 'keys.rotated', { kind: 'signing', current: views.find((k) => k.status === 'current')?.kid });
      return views;
    },
    cookieKeys: async () => ({ count: (await store.keys.cookieKeys()).length }),
    async rotateCookieKeys(actor) {
      const keys = await store.keys.rotateCookieKeys();
      await record(actor, 'keys.rotated', { kind: 'cookie', kept: keys.length });
      return { count: keys.length };
    },
  };
}
