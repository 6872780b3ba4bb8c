import { afterEach } from 'vitest';
import { startFakeAs, startFakeRs, type FakeAs, type FakeRs } from './fake-servers.js';

/**
 * For a test file: `pair()` starts a fake authorization server and a resource server that
 * trusts it; both, and whatever else is pushed to `cleanups`, are closed after each test.
 */
export function fakePairs() {
  const cleanups: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!.close();
  });
  async function pair(
    asOpts: Parameters<typeof startFakeAs>[0] = {},
    rsOpts: Parameters<typeof startFakeRs>[1] = {},
  ): Promise<[FakeAs, FakeRs]> {
    const as = await startFakeAs(asOpts);
    const rs = await startFakeRs(as, rsOpts);
    cleanups.push(as, rs);
    return [as, rs];
  }
  /** `closable`, to be closed after the test like the pair. */
  function closeAfter<T extends { close(): Promise<void> }>(closable: T): T {
    cleanups.push(closable);
    return closable;
  }
  return { pair, closeAfter, cleanups };
}
