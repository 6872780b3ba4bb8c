import { ResourceServerError } from './errors.js';
import type { AccessTokenVerifier, RevocationList, VerifiedAccessToken } from './types.js';

export type { RevocationList };

/** Private claim of the kit's AS naming the grant an access token was issued from. */
export const GRANT_ID_CLAIM = 'grant_id';

/**
 * In-process {@link RevocationList}: `revoke(grantId, untilMs)` remembers a grant until `untilMs`
 * (the longest access-token lifetime after the revocation is enough: later, every token of the
 * grant has expired on its own).
 */
export class MemoryRevocationList implements RevocationList {
  readonly #until = new Map<string, number>();
  constructor(private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.#until.size;
  }

  revoke(grantId: string, untilMs: number): void {
    if (untilMs > (this.#until.get(grantId) ?? 0)) this.#until.set(grantId, untilMs);
  }

  isRevoked(grantId: string): boolean {
    const until = this.#until.get(grantId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.#until.delete(grantId);
    return false;
  }

  /** Drops entries past their time (call now and then; `isRevoked` drops the ones it meets). */
  sweep(): void {
    const now = this.now();
    for (const [grantId, until] of this.#until) if (until <= now) this.#until.delete(grantId);
  }

  clear(): void {
    this.#until.clear();
  }
}

/** The grant a verified token belongs to (JWT claim or introspection member), if it names one. */
export function grantIdOf(verified: VerifiedAccessToken): string | undefined {
  const value = verified.claims[GRANT_ID_CLAIM];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The verifier with the revocation check after it: a cached token is checked too, so a revoked
 * grant stops working on the next request, not when the cache entry expires. Without a list the
 * verifier is returned as it is (no extra step on the hot path).
 */
export function withRevocationCheck(verifier: AccessTokenVerifier, list: RevocationList | undefined): AccessTokenVerifier {
  if (list === undefined) return verifier;
  const refuseRevoked = (verified: VerifiedAccessToken): VerifiedAccessToken => {
    const grantId = grantIdOf(verified);
    if (grantId !== undefined && list.isRevoked(grantId)) throw new ResourceServerError('grant_revoked');
    return verified;
  };
  const innerCached = verifier.cached?.bind(verifier);
  return {
    async verify(token) {
      return refuseRevoked(await verifier.verify(token));
    },
    // the synchronous cache path runs the same check, so the middleware keeps its promise-free
    // fast path with a revocation list (never copy the inner `cached`: it would skip the check)
    ...(innerCached === undefined
      ? {}
      : {
          cached(token: string, connection?: object) {
            const verified = innerCached(token, connection);
            return verified === undefined ? undefined : refuseRevoked(verified);
          },
        }),
    clear: () => verifier.clear(),
    get cacheSize() {
      return verifier.cacheSize;
    },
  };
}
