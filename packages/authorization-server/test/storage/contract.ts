/**
 * The storage contract, written once and run against every implementation
 * (memory, SQLite, PostgreSQL) by `contract.test.ts`. Its parts follow a backend's
 * (`contract/models.ts`, `keys.ts`, `accounts.ts`, `connections.ts`, `kv.ts`), then `lifecycle.ts`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterEach, beforeEach, describe } from 'vitest';
import type { RequestContext } from '../../src/storage/request-context.js';
import type { OpenStoreOptions } from '../../src/storage/assemble.js';
import type { Store } from '../../src/storage/index.js';
import { accountsContract } from './contract/accounts.js';
import { connectionsContract } from './contract/connections.js';
import { consoleContract } from './contract/console.js';
import { keysContract } from './contract/keys.js';
import { kvContract } from './contract/kv.js';
import { lifecycleContract } from './contract/lifecycle.js';
import { modelsContract } from './contract/models.js';
import { nulContract } from './contract/nul.js';

export class TestClock {
  ms = Date.UTC(2026, 0, 1);
  readonly now = (): number => this.ms;
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
  get seconds(): number {
    return Math.floor(this.ms / 1000);
  }
}

export interface ContractTarget {
  name: string;
  /** Opens a store on this target's (shared, per-suite) storage. */
  open(options: OpenStoreOptions): Promise<Store>;
  /** Wipes the target's storage between tests (fresh state for each test). */
  reset(): Promise<void>;
  /** Whether a second `open` sees what the first one wrote (false for memory). */
  durable: boolean;
}

/** The store and clock of the running test, opened afresh before each one by `storeContract`. */
export interface Opened {
  store: Store;
  clock: TestClock;
  /** The request the store's adapters see as being served (oidc-provider's `Provider.ctx` in the AS). */
  requests: AsyncLocalStorage<RequestContext>;
}

export function storeContract(target: ContractTarget): void {
  describe(`storage contract: ${target.name}`, () => {
    const opened = {} as Opened;

    beforeEach(async () => {
      await target.reset();
      opened.clock = new TestClock();
      opened.requests = new AsyncLocalStorage<RequestContext>();
      const { requests } = opened;
      opened.store = await target.open({ clock: opened.clock.now, cleanupIntervalSeconds: 0, currentRequest: () => requests.getStore() });
    });
    afterEach(async () => {
      await opened.store.close();
    });

    modelsContract(opened);
    keysContract(opened);
    accountsContract(opened);
    connectionsContract(opened);
    consoleContract(opened);
    kvContract(opened);
    nulContract(opened);
    lifecycleContract(target, opened);
  });
}
