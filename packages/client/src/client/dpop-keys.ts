import { boundRecord } from '../credential-binding.js';
import { createDpopKey, createPersistableDpopKey, dpopAlgorithm, dpopKeyFromJwk, type DpopKey } from '../dpop.js';
import type { ServerBinding } from '../store.js';
import type { ClientContext } from './context.js';

/** One DPoP key per (issuer, resource), loaded from the store when it keeps keys. */
export class DpopKeys {
  private readonly context: ClientContext;
  private readonly keys = new Map<string, Promise<DpopKey>>();

  constructor(context: ClientContext) {
    this.context = context;
  }

  /** The key for a binding; undefined when the `dpop` option and the metadata leave DPoP off. */
  keyFor(binding: ServerBinding, clientId: string): Promise<DpopKey | undefined> {
    const mode = this.context.opts.dpop;
    if (mode === 'never' || (mode === 'auto' && !binding.dpop_supported)) return Promise.resolve(undefined);
    const alg = dpopAlgorithm(binding.as_metadata);
    if (!alg) return Promise.resolve(undefined);
    const id = JSON.stringify([binding.issuer, binding.resource]);
    let key = this.keys.get(id);
    if (!key) {
      key = this.loadOrCreate(binding, alg, clientId);
      this.keys.set(id, key);
      key.catch(() => this.keys.delete(id));
    }
    return key;
  }

  /** A new login gets a new DPoP key. */
  async forget(binding: ServerBinding): Promise<void> {
    await this.context.store.deleteDpopKey?.(binding.issuer, binding.resource);
    this.keys.delete(JSON.stringify([binding.issuer, binding.resource]));
  }

  /**
   * A store that keeps DPoP keys (the memory and file stores) lets DPoP-bound tokens survive the
   * process (the CLI logs in once, then calls in later processes); other stores get in-memory keys.
   */
  private async loadOrCreate(binding: ServerBinding, alg: string, clientId: string): Promise<DpopKey> {
    const store = this.context.store;
    if (!store.getDpopKey || !store.setDpopKey) return createDpopKey(alg, clientId);
    const load = async () => {
      const stored = boundRecord(await store.getDpopKey!(binding.issuer, binding.resource), binding);
      if (stored && stored.alg === alg) {
        try {
          return await dpopKeyFromJwk(stored.alg, stored.private_jwk, clientId);
        } catch {
          // unreadable key: replaced below; tokens bound to it are then re-obtained
        }
      }
      const fresh = await createPersistableDpopKey(alg, clientId, binding.issuer, binding.resource);
      await store.setDpopKey!(fresh.stored);
      return fresh.key;
    };
    // two processes must not both create a key for the same pair (the loser's tokens would be unusable)
    return store.withLock ? store.withLock(load) : load();
  }
}
