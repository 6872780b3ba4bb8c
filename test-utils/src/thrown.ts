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

/**
 * The `problems` of the configuration error `run` throws (a `ConfigError`, code
 * `ERR_INVALID_CONFIG`, or an error whose `cause` is one); fails on any other outcome.
 */
export function configProblemsOf(run: () => unknown): readonly string[] {
  const error = thrownBy(run) as { code?: unknown; problems?: unknown; cause?: { code?: unknown; problems?: unknown } };
  const config = error?.code === 'ERR_INVALID_CONFIG' ? error : error?.cause;
  if (config?.code !== 'ERR_INVALID_CONFIG' || !Array.isArray(config.problems)) {
    return fail(`expected a configuration error, got ${String(error)}`);
  }
  return config.problems as readonly string[];
}

/**
 * What `promise` rejects with, checked to be an instance of `errorClass` (to assert on its code
 * or message); fails when it fulfils or rejects with anything else.
 */
export async function rejectionOf<E>(promise: Promise<unknown>, errorClass: abstract new (...args: never[]) => E): Promise<E> {
  const error = await promise.then(
    () => fail('expected a rejection, but the promise fulfilled'),
    (e: unknown) => e,
  );
  if (!(error instanceof errorClass)) return fail(`expected a ${errorClass.name}, got ${String(error)}`);
  return error;
}
