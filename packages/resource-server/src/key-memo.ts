import {
  createRemoteJWKSet,
  customFetch,
  type CryptoKey,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
  type JWTVerifyGetKey,
  type RemoteJWKSetOptions,
} from 'jose';

/** A jose remote JWK set that can also hand out, synchronously, a key it already chose. */
export interface MemoizedKeySet extends JWTVerifyGetKey {
  /**
   * The key jose's remote set chose for this `alg` + `kid` from its current JWKS, while that JWKS
   * is fresh (`cacheMaxAge`) and no refetch is under way; `undefined`: ask the set itself (which
   * fetches, refetches on an unknown `kid`, and refuses). Verifying with it is what the set would
   * do, minus the per-token awaits of resolving the key again.
   */
  cached(header: { alg?: unknown; kid?: unknown }): CryptoKey | undefined;
}

/** Distinct `alg` + `kid` pairs kept (only keys the JWKS holds ever enter). */
const MAX_MEMO = 64;

export function createMemoizedRemoteKeySet(
  url: URL,
  options: Omit<RemoteJWKSetOptions, typeof customFetch> & { fetch: typeof fetch },
): MemoizedKeySet {
  const { fetch: fetchImpl, ...remoteOptions } = options;
  const memo = new Map<string, CryptoKey>();
  // Every JWKS fetch starts a new generation: what the old JWKS gave is forgotten at once.
  let generation = 0;
  const remote = createRemoteJWKSet(url, {
    ...remoteOptions,
    [customFetch]: (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
      generation++;
      memo.clear();
      return fetchImpl(input, init);
    },
  });

  const getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    const before = generation;
    const settled = !remote.reloading;
    const key = await remote(header, token);
    // Only a choice made from the current JWKS, with no fetch started meanwhile, is remembered.
    if (
      settled &&
      !remote.reloading &&
      generation === before &&
      typeof header.kid === 'string' &&
      typeof header.alg === 'string' &&
      token.header === undefined &&
      isCryptoKey(key) &&
      memo.size < MAX_MEMO
    ) {
      memo.set(memoKey(header.alg, header.kid), key);
    }
    return key;
  };
  const cached = (header: { alg?: unknown; kid?: unknown }): CryptoKey | undefined => {
    if (typeof header.kid !== 'string' || typeof header.alg !== 'string' || memo.size === 0) return undefined;
    if (remote.reloading || !remote.fresh) return undefined;
    return memo.get(memoKey(header.alg, header.kid));
  };
  return Object.assign(getKey, { cached }) as MemoizedKeySet;
}

function memoKey(alg: string, kid: string): string {
  return `${alg}\u0000${kid}`;
}

export function isCryptoKey(key: unknown): key is CryptoKey {
  const CryptoKeyClass = (globalThis as { CryptoKey?: abstract new () => unknown }).CryptoKey;
  return CryptoKeyClass !== undefined && key instanceof CryptoKeyClass;
}
