/** Lifecycle helpers: what the enclosing describe's tests share, opened before them and closed after. */
import { afterAll, beforeAll } from 'vitest';
import { startAs, type RunningAs, type TestConfig } from './as.js';

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
