/**
 * Dropped PostgreSQL connections (a restart, a failover, backends closed by an administrator):
 * repeatable statements are retried on a fresh connection, the one-shot consume never is.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConnectionLoss, RECONNECT_ATTEMPTS, retryOnConnectionLoss } from '../../src/storage/postgres/reconnect.js';
import { pgStoreForSuite, TEST_DATABASE_URL } from './pg-helpers.js';

describe('isConnectionLoss', () => {
  it.each([
    ['57P01 admin_shutdown', { code: '57P01', message: 'terminating connection due to administrator command' }],
    ['57P02 crash_shutdown', { code: '57P02' }],
    ['57P03 cannot_connect_now', { code: '57P03' }],
    ['08006 connection_failure', { code: '08006' }],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['EPIPE', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })],
    ['socket closed under node-postgres', new Error('Connection terminated unexpectedly')],
    ['client already broken', new Error('Client has encountered a connection error and is not queryable')],
  ])('%s is a connection loss', (_, error) => {
    expect(isConnectionLoss(error)).toBe(true);
  });

  it.each([
    ['23505 unique_violation', { code: '23505' }],
    ['42P01 undefined_table', { code: '42P01' }],
    ['40001 serialization_failure', { code: '40001' }],
    ['a plain error', new Error('boom')],
    ['a message that only mentions a connection', new Error('user said: Connection terminated')],
    ['null', null],
    ['a string', 'Connection terminated'],
  ])('%s is not', (_, error) => {
    expect(isConnectionLoss(error)).toBe(false);
  });
});

describe('retryOnConnectionLoss', () => {
  it(`retries a connection loss, ${RECONNECT_ATTEMPTS} attempts in all`, async () => {
    let calls = 0;
    const lost = () => {
      calls++;
      return Promise.reject(Object.assign(new Error('gone'), { code: '57P01' }));
    };
    await expect(retryOnConnectionLoss(lost, 1)).rejects.toMatchObject({ code: '57P01' });
    expect(calls).toBe(RECONNECT_ATTEMPTS);

    calls = 0;
    const flaky = () =>
      ++calls < RECONNECT_ATTEMPTS ? Promise.reject(new Error('Connection terminated unexpectedly')) : Promise.resolve('ok');
    await expect(retryOnConnectionLoss(flaky, 1)).resolves.toBe('ok');
  });

  it('does not retry any other failure', async () => {
    let calls = 0;
    const wrong = () => {
      calls++;
      return Promise.reject(Object.assign(new Error('duplicate key'), { code: '23505' }));
    };
    await expect(retryOnConnectionLoss(wrong, 1)).rejects.toMatchObject({ code: '23505' });
    expect(calls).toBe(1);
  });
});

describe('PostgreSQL store: backends terminated under an open store', () => {
  const applicationName = `mak-reconnect-${randomBytes(4).toString('hex')}`;
  const suite = pgStoreForSuite('reconnect', `${TEST_DATABASE_URL}?application_name=${applicationName}`);
  let admin: pg.Client;

  /** Every backend of the store's pool killed, as a database restart would. */
  async function terminateAll(): Promise<number> {
    const { rows } = await admin.query<{ ok: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    return rows.filter((r) => r.ok).length;
  }

  /** Fills the pool with idle connections (the ones a restart leaves dead in it). */
  async function warmPool(): Promise<void> {
    const adapter = suite.store.adapter('Session');
    await Promise.all(Array.from({ length: 10 }, (_, i) => adapter.find(`warm-${i}`)));
  }

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
  });

  it('reads, upserts, deletes, kv, accounts, keys and ping issued right after the drop all succeed', async () => {
    const sessions = suite.store.adapter('Session');
    const account = await suite.store.accounts.create({ id: 'acct-reconnect', username: 'reconnect', passwordHash: null, disabled: false });
    for (let round = 0; round < 5; round++) {
      await warmPool();
      await sessions.upsert(`s-${round}`, { accountId: account.id, round }, 600);
      expect(await terminateAll()).toBeGreaterThan(0);
      // Issued at once, in parallel: most of them are handed a connection whose backend just died.
      const [found, , , kvValue, byId, keys] = await Promise.all([
        sessions.find(`s-${round}`),
        sessions.upsert(`t-${round}`, { round }, 600),
        suite.store.kv.set('reconnect', `k-${round}`, { round }, 600),
        suite.store.kv.get('reconnect', `missing-${round}`),
        suite.store.accounts.findById(account.id),
        suite.store.keys.signingKeys(),
        suite.store.ping(),
        sessions.destroy(`gone-${round}`),
      ]);
      expect(found).toMatchObject({ round });
      expect(kvValue).toBeUndefined();
      expect(byId?.username).toBe('reconnect');
      expect(Array.isArray(keys)).toBe(true);
      expect(await suite.store.kv.get('reconnect', `k-${round}`)).toEqual({ round });
      expect(await sessions.find(`t-${round}`)).toMatchObject({ round });
    }
  });

  it('a transaction whose connection died before BEGIN starts over on a fresh one', async () => {
    for (let round = 0; round < 3; round++) {
      await warmPool();
      expect(await terminateAll()).toBeGreaterThan(0);
      const created = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          suite.store.accounts.create({ id: `tx-${round}-${i}`, username: `tx-${round}-${i}`, passwordHash: null, disabled: false }),
        ),
      );
      expect(created.map((a) => a.username)).toEqual(Array.from({ length: 4 }, (_, i) => `tx-${round}-${i}`));
    }
  });

  it('a consume on a dropped connection stamps exactly once: retried only while the row reads unstamped', async () => {
    const codes = suite.store.adapter('AuthorizationCode');
    for (let round = 0; round < 5; round++) {
      await warmPool();
      const ids = Array.from({ length: 6 }, (_, i) => `code-${round}-${i}`);
      for (const id of ids) await codes.upsert(id, { grantId: `grant-${id}`, clientId: 'c' }, 60);
      expect(await terminateAll()).toBeGreaterThan(0);
      // Right after the drop every idle connection is dead: each consume meets one.
      await Promise.all(ids.map((id) => codes.consume(id)));
      for (const id of ids) expect((await codes.find(id))?.consumed).toEqual(expect.any(Number));
      // RFC 6749 §4.1.2: single use still holds — a second consume of any of them is refused.
      for (const id of ids) await expect(codes.consume(id)).rejects.toMatchObject({ error: 'invalid_grant' });
    }
  });
});
