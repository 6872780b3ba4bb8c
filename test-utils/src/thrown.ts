import { fail } from 'node:assert/strict';

/**
 * What `run` throws, to assert on (a configuration error's `problems`, an error's `code`);
 * fails when it returns instead. Runner-neutral (node:assert), as everything in test-utils.
 */
export function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return fail('expected an error, but nothing was thrown');
}
