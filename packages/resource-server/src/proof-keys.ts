import type { CryptoKey } from 'jose';

/** A proof key that verified a proof, and its RFC 7638 thumbprint once computed. */
export interface RememberedProofKey {
  key: CryptoKey;
  jkt?: string;
}

/** Keys kept: a client uses one key for all its proofs, so this covers as many active clients. */
const MAX_KEYS = 256;

/**
 * The public keys of recent DPoP proofs that verified (RFC 9449 §4.3 checks 6–7), by `alg` and
 * the proof's `jwk` exactly as sent. A client signs every proof with the same key, and importing
 * its JWK (WebCrypto) on each request would cost more than checking the proof's signature. Only
 * the import is skipped: every proof's signature is still checked with the key.
 *
 * The entry is named by the JWK's JSON as decoded, member for member: a JWK written differently
 * (another `use` or `key_ops`, say) is imported and judged again, never matched to a key that
 * verified under other members. The same JWK under another `alg` is another entry, since the
 * import depends on the algorithm (RSA-PSS and RSASSA-PKCS1-v1_5 keys differ). Only keys that
 * verified a proof enter (a new key still costs the server its import); beyond the
 * bound the least recently used goes first, so a client sending proofs keeps its key in.
 */
export class ProofKeyMemo {
  readonly #entries = new Map<string, RememberedProofKey>();

  /** The name of a proof key: its `alg` and its `jwk` member as decoded from the header. */
  static nameOf(alg: string, jwk: object): string {
    return `${alg}\u0000${JSON.stringify(jwk)}`;
  }

  get(name: string): RememberedProofKey | undefined {
    const entry = this.#entries.get(name);
    if (entry !== undefined) {
      // most recently used last, so the bound drops the key unused for the longest
      this.#entries.delete(name);
      this.#entries.set(name, entry);
    }
    return entry;
  }

  /** Remembers a key that has just verified a proof. */
  remember(name: string, entry: RememberedProofKey): void {
    this.#entries.delete(name);
    this.#entries.set(name, entry);
    if (this.#entries.size > MAX_KEYS) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  get size(): number {
    return this.#entries.size;
  }
}
