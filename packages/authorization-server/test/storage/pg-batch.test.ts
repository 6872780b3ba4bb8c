/**
 * Statements of concurrent requests sent as one (src/storage/postgres/batch.ts), first against a
 * recording statement, then on the PostgreSQL store, where a batch must give each request what
 * its own statement would have: RFC 6749 §4.1.2 single use included.
 */
import { describe, expect, it } from 'vitest';
import { Batcher, Gate, MAX_BATCH, type BatchStatement } from '../../src/storage/postgres/batch.js';
import { openStore } from '../../src/storage/index.js';
import { dropSchema, pgStoreForSuite, randomSchema, TEST_DATABASE_URL, withPgClient } from './pg-helpers.js';
import { nextTurn, sleep } from './turns.js';

interface Input {
  key: string;
  value: number;
}

/** A statement that records how it was called and answers `value * 10`. */
function recording(options: { failMany?: unknown; gate?: Gate } = {}) {
  const calls: { kind: 'one' | 'many'; keys: string[]; batchError?: unknown }[] = [];
  const statement: BatchStatement<Input, number> = {
    key: (input) => input.key,
    async one(input, batchError) {
      calls.push({ kind: 'one', keys: [input.key], batchError });
      return input.value * 10;
    },
    async many(inputs) {
      calls.push({ kind: 'many', keys: inputs.map((i) => i.key) });
      await sleep(5);
      if (options.failMany !== undefined) throw options.failMany;
      return inputs.map((i) => i.value * 10);
    },
  };
  const batcher = new Batcher(statement, options.gate);
  /** `key` + `value` of each input, in the order their callers were answered. */
  const answered: string[] = [];
  const submit = async (input: Input) => {
    const result = await batcher.submit(input);
    answered.push(`${input.key}${input.value}`);
    return result;
  };
  return { calls, batcher, submit, answered };
}

describe('Batcher', () => {
  it('sends the inputs of one turn as one statement, in key order, each caller getting its own result', async () => {
    const { calls, batcher } = recording();
    const results = await Promise.all([
      batcher.submit({ key: 'c', value: 3 }),
      batcher.submit({ key: 'a', value: 1 }),
      batcher.submit({ key: 'b', value: 2 }),
    ]);
    expect(results).toEqual([30, 10, 20]);
    expect(calls).toEqual([{ kind: 'many', keys: ['a', 'b', 'c'] }]);
  });

  it('a lone input runs its single statement', async () => {
    const { calls, batcher } = recording();
    expect(await batcher.submit({ key: 'a', value: 1 })).toBe(10);
    expect(calls).toEqual([{ kind: 'one', keys: ['a'], batchError: undefined }]);
  });

  it('inputs of later turns go in a later statement', async () => {
    const { calls, batcher } = recording();
    const first = batcher.submit({ key: 'a', value: 1 });
    await nextTurn();
    const second = batcher.submit({ key: 'b', value: 2 });
    expect(await Promise.all([first, second])).toEqual([10, 20]);
    expect(calls.map((c) => c.keys)).toEqual([['a'], ['b']]);
  });

  it('never puts two inputs for one row in one statement: the second waits for the first statement to finish', async () => {
    const { calls, submit, answered: order } = recording();
    const results = await Promise.all([submit({ key: 'a', value: 1 }), submit({ key: 'b', value: 2 }), submit({ key: 'a', value: 3 })]);
    expect(results).toEqual([10, 20, 30]);
    expect(calls.map((c) => c.keys)).toEqual([['a', 'b'], ['a']]);
    expect(order.indexOf('a3')).toBeGreaterThan(order.indexOf('a1'));
  });

  it('while a statement is running, inputs of later turns wait for it and then go together', async () => {
    const { calls, batcher } = recording();
    const first = [batcher.submit({ key: 'a', value: 1 }), batcher.submit({ key: 'b', value: 2 })];
    await nextTurn();
    const later = [batcher.submit({ key: 'c', value: 3 })];
    await nextTurn();
    later.push(batcher.submit({ key: 'd', value: 4 }));
    expect(await Promise.all([...first, ...later])).toEqual([10, 20, 30, 40]);
    expect(calls.map((c) => c.keys)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it('with room for two statements at once, a later turn does not wait', async () => {
    const { calls, batcher } = recording({ gate: new Gate(2) });
    const first = [batcher.submit({ key: 'a', value: 1 }), batcher.submit({ key: 'b', value: 2 })];
    await nextTurn();
    const second = batcher.submit({ key: 'c', value: 3 });
    await nextTurn();
    expect(calls.map((c) => c.keys)).toEqual([['a', 'b'], ['c']]);
    expect(await Promise.all([...first, second])).toEqual([10, 20, 30]);
  });

  it('with room for two statements at once, an input whose row is in the running statement waits for it, in submission order', async () => {
    const { calls, submit, answered: order } = recording({ gate: new Gate(2) });
    const first = [submit({ key: 'a', value: 1 }), submit({ key: 'b', value: 2 })];
    await nextTurn();
    const second = [submit({ key: 'a', value: 3 }), submit({ key: 'c', value: 4 })];
    await nextTurn();
    // c went at once, in the second place; a waits for the statement that holds row a
    expect(calls.map((c) => c.keys)).toEqual([['a', 'b'], ['c']]);
    expect(await Promise.all([...first, ...second])).toEqual([10, 20, 30, 40]);
    expect(calls.map((c) => c.keys)).toEqual([['a', 'b'], ['c'], ['a']]);
    expect(order.indexOf('a3')).toBeGreaterThan(order.indexOf('a1'));
  });

  it('batchers sharing a gate: while one runs its statement, the inputs of the others gather, and then go in turn', async () => {
    const gate = new Gate(1);
    const reads = recording({ gate });
    const writes = recording({ gate });
    const first = [reads.batcher.submit({ key: 'a', value: 1 }), reads.batcher.submit({ key: 'b', value: 2 })];
    await nextTurn();
    const waiting = [writes.batcher.submit({ key: 'x', value: 5 })];
    await nextTurn();
    waiting.push(writes.batcher.submit({ key: 'y', value: 6 }), reads.batcher.submit({ key: 'c', value: 3 }));
    await nextTurn();
    // the reads' statement still runs: nothing else was sent
    expect(writes.calls).toEqual([]);
    expect(await Promise.all([...first, ...waiting])).toEqual([10, 20, 50, 60, 30]);
    expect(reads.calls.map((c) => c.keys)).toEqual([['a', 'b'], ['c']]);
    expect(writes.calls.map((c) => c.keys)).toEqual([['x', 'y']]);
  });

  it(`splits a turn of more than ${MAX_BATCH} inputs into statements of at most ${MAX_BATCH}`, async () => {
    const { calls, batcher } = recording();
    const inputs = Array.from({ length: MAX_BATCH * 2 + 1 }, (_, i) => ({ key: `k${String(i).padStart(4, '0')}`, value: i }));
    const results = await Promise.all(inputs.map((input) => batcher.submit(input)));
    expect(results).toEqual(inputs.map((i) => i.value * 10));
    expect(calls.map((c) => c.keys.length).sort((a, b) => a - b)).toEqual([1, MAX_BATCH, MAX_BATCH]);
  });

  it('when the statement fails, every input runs alone and is told the batch error', async () => {
    const failure = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const { calls, batcher } = recording({ failMany: failure });
    const results = await Promise.all([batcher.submit({ key: 'a', value: 1 }), batcher.submit({ key: 'b', value: 2 })]);
    expect(results).toEqual([10, 20]);
    expect(calls.slice(1)).toEqual([
      { kind: 'one', keys: ['a'], batchError: failure },
      { kind: 'one', keys: ['b'], batchError: failure },
    ]);
  });

  it('a failing single statement rejects its own caller only', async () => {
    const statement: BatchStatement<Input, number> = {
      key: (input) => input.key,
      one: async (input) => {
        if (input.key === 'bad') throw new Error('refused');
        return input.value;
      },
      many: async () => {
        throw new Error('batch refused');
      },
    };
    const batcher = new Batcher(statement);
    const [good, bad] = await Promise.allSettled([batcher.submit({ key: 'good', value: 1 }), batcher.submit({ key: 'bad', value: 2 })]);
    expect(good).toEqual({ status: 'fulfilled', value: 1 });
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'refused' } });
  });
});

describe('PostgreSQL store: statements of one turn batched', () => {
  const suite = pgStoreForSuite('batch');

  it('concurrent upserts and finds of many rows each see their own row; missing and expired rows read as absent', async () => {
    const sessions = suite.store.adapter('Session');
    const ids = Array.from({ length: 40 }, (_, i) => `s-${i}`);
    await Promise.all(ids.map((id, i) => sessions.upsert(id, { jti: id, n: i, text: `quote " and \\ and \u0000 ${i}` }, 600)));
    await sessions.upsert('expired', { jti: 'expired' }, 1);
    await sleep(1100);
    const found = await Promise.all([...ids, 'missing', 'expired'].map((id) => sessions.find(id)));
    expect(found.slice(0, ids.length)).toEqual(ids.map((id, i) => ({ jti: id, n: i, text: `quote " and \\ and \u0000 ${i}` })));
    expect(found.slice(ids.length)).toEqual([undefined, undefined]);
  });

  it('rows without expiry (clients) and with one, upserted in one turn, keep theirs', async () => {
    const clients = suite.store.adapter('Client');
    const sessions = suite.store.adapter('Session');
    await Promise.all([
      clients.upsert('client-a', { client_id: 'client-a' }),
      clients.upsert('client-b', { client_id: 'client-b' }),
      sessions.upsert('brief', { v: 1 }, 1),
    ]);
    await sleep(1100);
    expect(await Promise.all([clients.find('client-a'), clients.find('client-b'), sessions.find('brief')])).toEqual([
      { client_id: 'client-a' },
      { client_id: 'client-b' },
      undefined,
    ]);
  });

  it('two upserts of one row in one turn both apply, the later one last', async () => {
    const sessions = suite.store.adapter('Session');
    await Promise.all([
      sessions.upsert('twice', { v: 1 }, 600),
      sessions.upsert('twice', { v: 2 }, 600),
      sessions.upsert('other', { v: 3 }, 600),
    ]);
    expect(await sessions.find('twice')).toEqual({ v: 2 });
    expect(await sessions.find('other')).toEqual({ v: 3 });
  });

  it('RFC 6749 §4.1.2: concurrent consumes of many codes, some presented twice, stamp each code exactly once', async () => {
    const codes = suite.store.adapter('AuthorizationCode');
    const grants = suite.store.adapter('Grant');
    const ids = Array.from({ length: 12 }, (_, i) => `code-${i}`);
    for (const id of ids) {
      await grants.upsert(`grant-${id}`, { jti: `grant-${id}`, kind: 'Grant' }, 600);
      await codes.upsert(id, { jti: id, kind: 'AuthorizationCode', grantId: `grant-${id}` }, 60);
    }
    const replayed = new Set(ids.slice(0, 4));
    const attempts = [...ids, ...replayed];
    const results = await Promise.allSettled(attempts.map((id) => codes.consume(id)));
    for (const id of ids) {
      const outcomes = results.filter((_, i) => attempts[i] === id);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(refused.map((o) => o.reason.error)).toEqual(replayed.has(id) ? ['invalid_grant'] : []);
      // a replayed code's grant is revoked (RFC 9700 §4.5.3.1); the others keep theirs
      expect(await grants.find(`grant-${id}`)).toEqual(replayed.has(id) ? undefined : { jti: `grant-${id}`, kind: 'Grant' });
    }
  });

  it('a consume in one turn with an expired or missing code is refused for that code only', async () => {
    const codes = suite.store.adapter('AuthorizationCode');
    await codes.upsert('live', { jti: 'live', grantId: 'g-live' }, 60);
    await codes.upsert('short', { jti: 'short', grantId: 'g-short' }, 1);
    await sleep(1100);
    const [live, short, missing] = await Promise.allSettled([codes.consume('live'), codes.consume('short'), codes.consume('nope')]);
    expect(live.status).toBe('fulfilled');
    expect(short).toMatchObject({ status: 'rejected', reason: { error: 'invalid_grant' } });
    expect(missing).toMatchObject({ status: 'rejected', reason: { error: 'invalid_grant' } });
    expect((await codes.find('live'))?.consumed).toEqual(expect.any(Number));
  });

  it('codes of one account read in one turn each bring its account along; a later change of the account is seen at once', async () => {
    const account = await suite.store.accounts.create({ id: 'acct-batch', username: 'batch-user', passwordHash: null, disabled: false });
    const codes = suite.store.adapter('AuthorizationCode');
    const ids = Array.from({ length: 6 }, (_, i) => `acct-code-${i}`);
    for (const id of ids) await codes.upsert(id, { jti: id, accountId: account.id, grantId: 'g-acct' }, 60);
    const found = await Promise.all(ids.map((id) => codes.find(id)));
    expect(found.map((f) => f?.accountId)).toEqual(ids.map(() => account.id));
    // as many account lookups as code reads, as oidc-provider makes them
    const accounts = await Promise.all(ids.map(() => suite.store.accounts.findById(account.id)));
    expect(accounts.map((a) => a?.disabled)).toEqual(ids.map(() => false));
    await Promise.all(ids.map((id) => codes.find(id)));
    await suite.store.accounts.update(account.id, { disabled: true });
    // the reads taken before the update are dropped with it: the lookup reads the new state
    expect((await suite.store.accounts.findById(account.id))?.disabled).toBe(true);
  });

  it('batched reads and consumes look each row up by its key, whatever the table statistics say (no sequential scan)', async () => {
    // Its own schema, never analyzed, and plans cached from the first execution on: the case in
    // which a join of the inputs with the table was planned as a scan of the whole table.
    const scanSchema = randomSchema('batch_scan');
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set('options', '-c plan_cache_mode=force_generic_plan');
    const scans = async () => {
      const { rows } = await withPgClient((client) =>
        client.query<{ seq_scan: string; idx_scan: string }>(
          `SELECT seq_scan, idx_scan FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'oidc_models'`,
          [scanSchema],
        ),
      );
      return { seq: Number(rows[0]!.seq_scan), idx: Number(rows[0]!.idx_scan) };
    };
    try {
      const setup = await openStore({ kind: 'postgres', url: url.href, schema: scanSchema });
      const ids = Array.from({ length: 300 }, (_, i) => `scan-${String(i).padStart(3, '0')}`);
      try {
        for (let i = 0; i < ids.length; i += 50) {
          await Promise.all(
            ids.slice(i, i + 50).map((id) => setup.adapter('AuthorizationCode').upsert(id, { jti: id, grantId: `g-${id}` }, 600)),
          );
        }
      } finally {
        await setup.close(); // a backend reports its statistics when it ends
      }
      const before = await scans();
      const store = await openStore({ kind: 'postgres', url: url.href, schema: scanSchema });
      try {
        for (let round = 0; round < 8; round++) {
          const batch = ids.slice(round * 30, round * 30 + 30);
          const found = await Promise.all(batch.map((id) => store.adapter('AuthorizationCode').find(id)));
          expect(found.map((f) => f?.jti)).toEqual(batch);
          await Promise.all(batch.map((id) => store.adapter('AuthorizationCode').consume(id)));
          await Promise.all(batch.map((id) => store.adapter('Session').find(id)));
        }
      } finally {
        await store.close();
      }
      // the index lookups show up once the ended backends' statistics are in
      let after = await scans();
      for (let wait = 0; wait < 50 && after.idx === before.idx; wait++) {
        await sleep(100);
        after = await scans();
      }
      expect(after.idx).toBeGreaterThan(before.idx);
      expect(after.seq - before.seq).toBe(0);
    } finally {
      await dropSchema(scanSchema);
    }
  });

  it('RFC 6749 §4.1.2 across instances: two stores consuming the same codes at once, in opposite orders, stamp each exactly once', async () => {
    const other = await openStore({ kind: 'postgres', url: TEST_DATABASE_URL, schema: suite.schema });
    try {
      for (let round = 0; round < 3; round++) {
        const ids = Array.from({ length: 20 }, (_, i) => `race-${round}-${String(i).padStart(2, '0')}`);
        for (const id of ids) await suite.store.adapter('AuthorizationCode').upsert(id, { jti: id, grantId: `g-${id}` }, 60);
        const [mine, theirs] = await Promise.all([
          Promise.allSettled(ids.map((id) => suite.store.adapter('AuthorizationCode').consume(id))),
          Promise.allSettled([...ids].reverse().map((id) => other.adapter('AuthorizationCode').consume(id))),
        ]);
        theirs.reverse();
        ids.forEach((id, i) => {
          const outcomes = [mine[i]!, theirs[i]!];
          expect(
            outcomes.filter((o) => o.status === 'fulfilled'),
            id,
          ).toHaveLength(1);
          const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
          expect(refused?.reason.error, id).toBe('invalid_grant');
        });
      }
    } finally {
      await other.close();
    }
  });
});
