import { afterAll, beforeAll } from 'vitest';

/**
 * What a describe block's tests share, started once before them and closed after them. The
 * returned object reads through to the started value, so tests and later hooks use it as the
 * value itself; it exists only once its `beforeAll` has run, so read it inside hooks and tests.
 * Registered first in a block, it starts before the block's other `beforeAll`s and closes after
 * its other `afterAll`s (vitest runs after-hooks in reverse).
 */
export function sharedForSuite<T extends { close(): unknown }>(start: () => Promise<T>, timeout?: number): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await start();
  }, timeout);
  afterAll(async () => {
    await value?.close();
  });
  const started = (): T => {
    if (value === undefined) throw new Error('sharedForSuite: read before its beforeAll started it');
    return value;
  };
  return new Proxy({} as T, {
    get(_target, key) {
      const field = Reflect.get(started(), key);
      // Methods keep their own receiver (private fields, bound state), not the proxy.
      return typeof field === 'function' ? field.bind(started()) : field;
    },
    set: (_target, key, field) => Reflect.set(started(), key, field),
    has: (_target, key) => Reflect.has(started(), key),
  });
}
