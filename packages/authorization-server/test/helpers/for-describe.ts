/** Lifecycle helpers: what the enclosing describe's tests share, opened before them and closed after. */
import { afterAll, beforeAll } from 'vitest';
import { openStore, type Store } from '../../src/storage/index.js';
import { registerClient, startAs, type RunningAs, type TestConfig } from './as.js';

/**
 * Opens what `open` returns before the enclosing describe's tests, hands it to `use` (which may
 * prepare more, such as a registered client) and closes it after them.
 */
export function openForDescribe<T extends { close(): unknown }>(open: () => Promise<T>, use: (opened: T) => unknown): void {
  let opened: T | undefined;
  beforeAll(async () => {
    opened = await open();
    await use(opened);
  });
  afterAll(async () => {
    await opened?.close();
  });
}

/** An authorization server started with `config` for the enclosing describe (see `openForDescribe`). */
export function startAsForDescribe(config: TestConfig, use: (t: RunningAs) => unknown): void {
  openForDescribe(() => startAs(config), use);
}

/** An authorization server and one registered public client for the enclosing describe. */
export function startAsWithClientForDescribe(config: TestConfig, use: (t: RunningAs, clientId: string) => unknown): void {
  startAsForDescribe(config, async (t) => use(t, (await registerClient(t.url)).body.client_id));
}

/** A memory store for the enclosing describe (see `openForDescribe`). */
export function memoryStoreForDescribe(use: (store: Store) => unknown): void {
  openForDescribe(() => openStore({ kind: 'memory' }), use);
}
