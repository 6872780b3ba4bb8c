/**
 * Key-value sets and increments of concurrent requests sent as one statement per kind
 * (src/storage/postgres/kv.ts over batch.ts): each caller must get what its own statement
 * would have given — a counter counts every increment exactly once (rate limits, the login
 * throttle and the refresh grace's claim rely on it).
 */
import { describe, expect, it } from 'vitest';
import { pgStoreForSuite, recordStatements } from './pg-helpers.js';
import { sleep } from './turns.js';

/** kv statements sent while `run` runs. */
async function kvStatements<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const { result, statements } = await recordStatements(run);
  return { result, statements: statements.map((s) => s.text).filter((text) => /\.kv\b/.test(text)) };
}

describe('PostgreSQL kv: concurrent sets and increments as one statement', () => {
  const suite = pgStoreForSuite('kv_batch');

  it('increments of distinct counters in one turn: one statement, each caller its own count; a later turn counts on', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const first = await kvStatements(() => Promise.all(keys.map((k) => suite.store.kv.increment('batch', k, 1, 60))));
    expect(first.result).toEqual(keys.map(() => 1));
    expect(first.statements).toHaveLength(1);
    const second = await kvStatements(() => Promise.all(keys.map((k, i) => suite.store.kv.increment('batch', k, i + 1, 60))));
    expect(second.result).toEqual(keys.map((_, i) => i + 2));
    expect(second.statements).toHaveLength(1);
  });

  it('one counter incremented by many callers in one turn counts each exactly once (1..n, no two alike)', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => suite.store.kv.increment('batch', 'shared', 1, 60)));
    expect([...results].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await suite.store.kv.get('batch', 'shared')).toBe(10);
  });

  it('a batch restarts an expired or non-numeric counter at its increment, and keeps a live one', async () => {
    await suite.store.kv.set('batch', 'stale', 41, 0.001); // expired a millisecond later
    await suite.store.kv.set('batch', 'text', 'not a number', 60);
    await suite.store.kv.increment('batch', 'live', 5, 60);
    await sleep(20);
    const results = await Promise.all([
      suite.store.kv.increment('batch', 'stale', 1, 60),
      suite.store.kv.increment('batch', 'text', 2, 60),
      suite.store.kv.increment('batch', 'live', 3, 60),
    ]);
    expect(results).toEqual([1, 2, 8]);
  });

  it('sets of distinct keys in one turn: one statement, each value kept with its own expiry', async () => {
    const { statements } = await kvStatements(() =>
      Promise.all([
        suite.store.kv.set('batch', 's1', { a: 1 }, 60),
        suite.store.kv.set('batch', 's2', 'two', 60),
        suite.store.kv.set('batch', 's3', null, 0.001),
      ]),
    );
    expect(statements).toHaveLength(1);
    await sleep(20);
    expect(await suite.store.kv.get('batch', 's1')).toEqual({ a: 1 });
    expect(await suite.store.kv.get('batch', 's2')).toBe('two');
    expect(await suite.store.kv.get('batch', 's3')).toBeUndefined();
  });

  it('two sets of one key in one turn both apply, the later one last', async () => {
    await Promise.all([suite.store.kv.set('batch', 'twice', 'first', 60), suite.store.kv.set('batch', 'twice', 'second', 60)]);
    expect(await suite.store.kv.get('batch', 'twice')).toBe('second');
  });
});
