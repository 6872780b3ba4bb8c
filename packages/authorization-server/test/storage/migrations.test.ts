import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/index.js';
import { pendingMigrations, POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from '../../src/storage/migrations.js';
import { openSqliteDriver } from '../../src/storage/sqlite/driver.js';
import { dropSchema, randomSchema, schemaExists, TEST_DATABASE_URL, withPgClient } from './pg-helpers.js';
import { scratchDir } from './scratch-dir.js';
import { caseName, SQLITE_DRIVERS } from './sqlite-drivers.js';

describe('pendingMigrations', () => {
  const all = [
    { version: 1, name: 'a', sql: '' },
    { version: 2, name: 'b', sql: '' },
  ];
  it('returns the missing steps in version order', () => {
    expect(pendingMigrations([...all].reverse(), []).map((m) => m.version)).toEqual([1, 2]);
    expect(pendingMigrations(all, [1]).map((m) => m.version)).toEqual([2]);
    expect(pendingMigrations(all, [1, 2])).toEqual([]);
  });
  it('refuses a database migrated by a newer build', () => {
    expect(() => pendingMigrations(all, [1, 2, 3])).toThrow(/newer than this build/);
  });
  it('both dialects ship the same versions', () => {
    expect(SQLITE_MIGRATIONS.map((m) => m.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
  });
});

describe('PostgreSQL start-up migrations', () => {
  const schemas: string[] = [];
  const fresh = () => {
    const s = randomSchema('storage_mig');
    schemas.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  async function appliedVersions(schema: string): Promise<number[]> {
    const { rows } = await withPgClient((client) =>
      client.query<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`),
    );
    return rows.map((r) => r.version);
  }

  it('creates the schema if missing and applies each migration exactly once when four instances start together', async () => {
    const schema = fresh();
    expect(await schemaExists(schema)).toBe(false);
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => openStore({ kind: 'postgres', url: TEST_DATABASE_URL, schema }, { cleanupIntervalSeconds: 0 })),
    );
    try {
      expect(await schemaExists(schema)).toBe(true);
      expect(await appliedVersions(schema)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
      const keys = await Promise.all(stores.map((s) => s.keys.signingKeys()));
      for (const k of keys) expect(k.map((x) => x.jwk.kid)).toEqual(keys[0]!.map((x) => x.jwk.kid));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
    const again = await openStore({ kind: 'postgres', url: TEST_DATABASE_URL, schema }, { cleanupIntervalSeconds: 0 });
    await again.close();
    expect(await appliedVersions(schema), 'idempotent on restart').toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
  });

  it('refuses to start on a schema migrated by a newer build', async () => {
    const schema = fresh();
    const store = await openStore({ kind: 'postgres', url: TEST_DATABASE_URL, schema }, { cleanupIntervalSeconds: 0 });
    await store.close();
    await withPgClient((client) => client.query(`INSERT INTO "${schema}".schema_migrations (version, name) VALUES (999, 'future')`));
    await expect(openStore({ kind: 'postgres', url: TEST_DATABASE_URL, schema })).rejects.toMatchObject({ code: 'misconfigured' });
  });

  it('refuses a schema name that is not a plain identifier (no SQL injection through config)', async () => {
    await expect(openStore({ kind: 'postgres', url: TEST_DATABASE_URL, schema: 'x"; DROP SCHEMA public; --' })).rejects.toMatchObject({
      code: 'misconfigured',
    });
  });
});

describe.each(SQLITE_DRIVERS.map((c) => [caseName(c), c] as const))('SQLite start-up, %s', (_name, { driver, skip }) => {
  const dir = scratchDir('sqlite');

  it.skipIf(skip !== undefined)('creates the folder, a private file (0600) in WAL mode, and records the migrations', async () => {
    const file = join(dir, 'a', 'b', 'auth.sqlite');
    const store = await openStore({ kind: 'sqlite', file, driver }, { cleanupIntervalSeconds: 0 });
    await store.keys.signingKeys();
    await store.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const db = await openSqliteDriver(file, driver);
    try {
      expect(db.prepare('PRAGMA journal_mode').get()).toEqual(expect.objectContaining({ journal_mode: 'wal' }));
      const versions = (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map(
        (r) => r.version,
      );
      expect(versions).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
    } finally {
      db.close();
    }
  });

  it.skipIf(skip !== undefined)(
    'sets the busy timeout (5 s) on every connection it opens',
    async () => {
      const file = join(dir, 'busy.sqlite');
      const store = await openStore({ kind: 'sqlite', file, driver }, { cleanupIntervalSeconds: 0 });
      try {
        // Two IMMEDIATE writers on one file: the second waits for the first instead of failing at once.
        const other = await openSqliteDriver(file, driver);
        other.exec('BEGIN IMMEDIATE');
        const started = Date.now();
        // The lock is never released while the store waits (its write blocks this thread), so
        // the write fails, but only after busy_timeout, not at once.
        await expect(store.kv.set('ns', 'k', 1, 60)).rejects.toThrow(/locked|busy/i);
        expect(Date.now() - started).toBeGreaterThanOrEqual(4_500);
        other.exec('COMMIT');
        other.close();
        await store.kv.set('ns', 'k', 1, 60);
        expect(await store.kv.get('ns', 'k')).toBe(1);
      } finally {
        await store.close();
      }
    },
    15_000,
  );

  it.skipIf(skip !== undefined)('refuses a database file migrated by a newer build', async () => {
    const file = join(dir, 'future.sqlite');
    const store = await openStore({ kind: 'sqlite', file, driver }, { cleanupIntervalSeconds: 0 });
    await store.close();
    const db = await openSqliteDriver(file, driver);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, 0)').run('future');
    db.close();
    await expect(openStore({ kind: 'sqlite', file, driver })).rejects.toMatchObject({ code: 'misconfigured' });
  });
});
