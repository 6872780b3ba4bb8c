import { createMemoizedRemoteKeySet, type MemoizedKeySet } from './key-memo.js';
import { discoverAuthorizationServer, MetadataError, type AuthorizationServerMetadata } from './as-metadata.js';

export interface KeyStoreOptions {
  fetch: typeof fetch;
  timeoutMs: number;
  /** Minimum time between two JWKS refetches triggered by an unknown `kid`. */
  cooldownMs: number;
  /** Age after which the JWKS is refetched before use. */
  cacheMaxAgeMs: number;
  /** How long a failed metadata discovery is remembered before it is retried. */
  failureCooldownMs: number;
  /** Per-issuer overrides that skip discovery. */
  jwksUris: Readonly<Record<string, string>>;
  now: () => number;
}

interface IssuerEntry {
  metadata?: Promise<AuthorizationServerMetadata>;
  failedAt?: number;
  keys?: MemoizedKeySet;
}

/**
 * Per-issuer JWKS resolution: `jwks_uri` from RFC 8414 metadata (or a configured override), then
 * jose's remote JWK set, which caches keys and refetches at most once per cooldown when a token
 * names an unknown `kid`. Every failure rejects (the caller fails closed).
 */
export class KeyStore {
  readonly #issuers = new Map<string, IssuerEntry>();
  constructor(private readonly options: KeyStoreOptions) {}

  /** Metadata for `issuer`; concurrent callers share one fetch, failures are remembered briefly. */
  async metadata(issuer: string): Promise<AuthorizationServerMetadata> {
    let entry = this.#issuers.get(issuer);
    if (entry === undefined) {
      entry = {};
      this.#issuers.set(issuer, entry);
    }
    if (entry.metadata === undefined) {
      const now = this.options.now();
      if (entry.failedAt !== undefined && now - entry.failedAt < this.options.failureCooldownMs) {
        throw new MetadataError('authorization server metadata recently unavailable', { issuer });
      }
      const override = this.options.jwksUris[issuer];
      const pending =
        override !== undefined
          ? Promise.resolve<AuthorizationServerMetadata>({ issuer, jwks_uri: override })
          : discoverAuthorizationServer(issuer, this.options);
      entry.metadata = pending;
      const current = entry;
      pending.catch(() => {
        current.metadata = undefined;
        current.failedAt = this.options.now();
      });
    }
    return entry.metadata;
  }

  /**
   * The key resolver {@link keys} already built for `issuer` (its metadata resolved), without a
   * promise: the per-token path of a warm server skips the awaits. `undefined`: call `keys`.
   */
  resolvedKeys(issuer: string): MemoizedKeySet | undefined {
    return this.#issuers.get(issuer)?.keys;
  }

  /** jose key resolver for tokens from `issuer`. */
  async keys(issuer: string): Promise<MemoizedKeySet> {
    const metadata = await this.metadata(issuer);
    const entry = this.#issuers.get(issuer)!;
    if (entry.keys === undefined) {
      if (metadata.jwks_uri === undefined) {
        throw new MetadataError('authorization server metadata has no jwks_uri', { issuer });
      }
      entry.keys = createMemoizedRemoteKeySet(new URL(metadata.jwks_uri), {
        timeoutDuration: this.options.timeoutMs,
        cooldownDuration: this.options.cooldownMs,
        cacheMaxAge: this.options.cacheMaxAgeMs,
        headers: { accept: 'application/json' },
        fetch: this.options.fetch,
      });
    }
    return entry.keys;
  }

  clear(): void {
    this.#issuers.clear();
  }
}
