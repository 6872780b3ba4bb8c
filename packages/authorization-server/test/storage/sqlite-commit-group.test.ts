/**
 * The SQLite store commits the writes of one turn of the event loop as one transaction
 * (src/storage/sqlite/commit-group.ts). A group must be the same as its writes one after
 * another: each write keeps its own result and its own error, a conditional write still sees
 * the writes before it (a code consumed twice at once is a replay, RFC 6749 §4.1.2, RFC 9700
 * §4.5.3.1), nothing is reported before it is committed, and a refresh token's rotation stamps
 * the old token and saves its successor both or neither (OAuth 2.1 §4.3.1). Run once per driver,
 * on real database files; a second connection reads what was committed.
 */
import { join } from 'node:path';
import { errors } from 'oidc-provider';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/storage/index.js';
import type { ModelRow, Stamp } from '../../src/storage/model-rows.js';
import { openSqliteBackend } from '../../src/storage/sqlite/index.js';
import { CommitGroup } from '../../src/storage/sqlite/commit-group.js';
import { openSqliteDriver, type SqliteDriver } from '../../src/storage/sqlite/driver.js';
import { scratchDir } from './scratch-dir.js';
import { caseName, SQLITE_DRIVERS } from './sqlite-drivers.js';

const dir = scratchDir('commit-group');
let files = 0;
const newFile = () => join(dir, `db-${++files}.sqlite`);

/** A real driver that also records the transactions it opens. */
function recording(db: SqliteDriver) {
  const transactions: string[] = [];
  const driver: SqliteDriver = {
    name: db.name,
    prepare: (sql) => db.prepare(sql),
    exec: (sql) => db.exec(sql),
    transaction: (fn, mode) => {
      transactions.push(mode ?? 'deferred');
      return db.transaction(fn, mode);
    },
    isUniqueViolation: (error) => db.isUniqueViolation(error),
    close: () => db.close(),
  };
  return { driver, transactions };
}

for (const sqlite of SQLITE_DRIVERS) {
  describe.skipIf(sqlite.skip !== undefined)(caseName(sqlite), () => {
    const opened: { close(): unknown }[] = [];
    afterEach(async () => {
      for (const db of opened.splice(0).reverse()) await db.close();
    });

    /** A table of counters on a new file, the group's connection and a second one that reads. */
    async function counters() {
      const file = newFile();
      const db = await openSqliteDriver(file, sqlite.driver);
      opened.push(db);
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('CREATE TABLE counters (name TEXT PRIMARY KEY, n INTEGER NOT NULL)');
      db.exec("INSERT INTO counters VALUES ('a', 0), ('b', 0)");
      const reader = await openSqliteDriver(file, sqlite.driver);
      opened.push(reader);
      const { driver, transactions } = recording(db);
      const add = (name: string) => () => Number(db.prepare('UPDATE counters SET n = n + 1 WHERE name = ?').run(name).changes);
      const read = (name: string) => (reader.prepare('SELECT n FROM counters WHERE name = ?').get(name) as { n: number }).n;
      return { db, group: new CommitGroup(driver), transactions, add, read };
    }

    it('writes of one turn run in one IMMEDIATE transaction, in order, each with its own result, reported once committed', async () => {
      const { db, group, transactions, add, read } = await counters();
      const seenWhenReported: number[] = [];
      const results = await Promise.all([
        group.submit(add('a')).then((r) => {
          seenWhenReported.push(read('a'));
          return r;
        }),
        group.submit(add('a')),
        group.submit(() => (db.prepare('SELECT n FROM counters WHERE name = ?').get('a') as { n: number }).n),
        group.submit(add('missing')),
      ]);
      expect(transactions).toEqual(['immediate']);
      // the third write sees the two before it; an UPDATE of no row reports 0 changes
      expect(results).toEqual([1, 1, 2, 0]);
      // the second connection already saw both increments when the first write was reported
      expect(seenWhenReported).toEqual([2]);
    });

    it('a lone write runs on its own, without a group transaction', async () => {
      const { group, transactions, add, read } = await counters();
      await group.submit(add('b'));
      expect(transactions).toEqual([]);
      expect(read('b')).toBe(1);
    });

    it('a failing write fails alone: the group rolls back and every write runs again by itself, once', async () => {
      const { group, add, read } = await counters();
      const outcomes = await Promise.allSettled([
        group.submit(add('a')),
        group.submit(() => {
          throw new Error('this write fails');
        }),
        group.submit(add('a')),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'this write fails' });
      // each successful write happened exactly once, although the group ran them before it failed
      expect(read('a')).toBe(2);
    });

    it('a write made of several statements in its own nested transaction is undone alone when it fails', async () => {
      const { db, group, add, read } = await counters();
      const outcomes = await Promise.allSettled([
        group.submit(add('b')),
        group.submit(() =>
          db.transaction(() => {
            add('a')();
            db.prepare('INSERT INTO counters VALUES (?, ?)').run('b', 0); // primary key taken
          }, 'immediate'),
        ),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
      expect(read('a')).toBe(0);
      expect(read('b')).toBe(1);
    });

    describe('the store on its commit group', () => {
      let store: Store | undefined;
      afterEach(async () => {
        await store?.close();
        store = undefined;
      });

      it('a code redeemed twice in one turn: one consume stamps it, the other is refused as a replay and revokes the grant', async () => {
        store = await openStore({ kind: 'sqlite', file: newFile(), driver: sqlite.driver }, { cleanupIntervalSeconds: 0 });
        const codes = store.adapter('AuthorizationCode');
        await codes.upsert('code-1', { jti: 'code-1', kind: 'AuthorizationCode', grantId: 'grant-1' }, 60);
        await store.adapter('AccessToken').upsert('at-1', { jti: 'at-1', kind: 'AccessToken', grantId: 'grant-1' }, 60);
        const outcomes = await Promise.allSettled([codes.consume('code-1'), codes.consume('code-1')]);
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
        expect(refused.reason).toBeInstanceOf(errors.InvalidGrant);
        expect(await store.adapter('AccessToken').find('at-1')).toBeUndefined();
      });

      it('close() commits the writes still waiting for their turn', async () => {
        const file = newFile();
        store = await openStore({ kind: 'sqlite', file, driver: sqlite.driver }, { cleanupIntervalSeconds: 0 });
        const pending = [store.kv.set('ns', 'k', { v: 1 }, 60), store.kv.increment('ns', 'n', 3, 60)];
        await store.close();
        await expect(Promise.all(pending)).resolves.toEqual([undefined, 3]);
        store = await openStore({ kind: 'sqlite', file, driver: sqlite.driver }, { cleanupIntervalSeconds: 0 });
        expect(await store.kv.get('ns', 'k')).toEqual({ v: 1 });
        expect(await store.kv.increment('ns', 'n', 1, 60)).toBe(4);
      });
    });

    describe('refresh token rotation (SqliteModels.rotate)', () => {
      const now = Date.now();
      const stamp = (id: string, consumedAt = 1_700_000_000): Stamp => ({ model: 'RefreshToken', id, consumedAt, now });
      const successor = (id: string): ModelRow => ({
        model: 'RefreshToken',
        id,
        payload: { jti: id, kind: 'RefreshToken', grantId: 'g' },
        grantId: 'g',
        uid: null,
        userCode: null,
        expiresAt: now + 600_000,
      });

      async function backend() {
        const parts = await openSqliteBackend(newFile(), () => now, sqlite.driver);
        opened.push(parts);
        await parts.models.upsert({ ...successor('old'), payload: { jti: 'old', kind: 'RefreshToken', grantId: 'g' } });
        return parts.models;
      }

      it('stamps the old token and saves its successor', async () => {
        const models = await backend();
        await models.rotate!(stamp('old'), successor('new'));
        expect((await models.find('RefreshToken', 'old', now))?.consumed).toBe(1_700_000_000);
        expect(await models.find('RefreshToken', 'new', now)).toEqual({ jti: 'new', kind: 'RefreshToken', grantId: 'g' });
      });

      it('both or neither, alone and in a group: when the successor cannot be saved, the old token stays unstamped', async () => {
        const models = await backend();
        const broken = { ...successor('broken'), id: null as unknown as string }; // NOT NULL
        await expect(models.rotate!(stamp('old'), broken)).rejects.toThrow();
        const outcomes = await Promise.allSettled([models.upsert(successor('other')), models.rotate!(stamp('old'), broken)]);
        expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
        expect((await models.find('RefreshToken', 'old', now))?.consumed).toBeUndefined();
        expect((await models.find('RefreshToken', 'other', now))?.jti).toBe('other');
      });
    });
  });
}
