import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type StorageConfig, type Store } from '../../src/storage/index.js';
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from '../../src/storage/migrations.js';
import { openSqliteDriver, type SqliteDriverName } from '../../src/storage/sqlite/driver.js';
import { dropSchema, randomSchema, TEST_DATABASE_URL, withPgClient } from './pg-helpers.js';
import { scratchDir } from './scratch-dir.js';
import { caseName, SQLITE_DRIVERS } from './sqlite-drivers.js';

/**
 * Migration 2 (account source) on a database written by an earlier build: a row with an upstream
 * identity may come from a self sign-up, so its origin is `unknown` (never adopted by e-mail); a
 * row without one was made by the operator. Stored usernames keep working: their `username_key`
 * was computed exactly as the canonical identity key is, even for a name the new creation rule
 * would refuse.
 */
const LEGACY = [
  // id, username, username_key (as the earlier build wrote it), identity
  ['op', 'Alice', 'alice', undefined],
  ['signed-up', 'pat@acme.example', 'pat@acme.example', 'https://upstream.example pat@acme.example'],
  ['odd', 'legacy\u200bname', 'legacy\u200bname', undefined],
] as const;

async function expectMigrated(store: Store): Promise<void> {
  expect((await store.accounts.findByUsername('ALICE'))?.source).toBe('operator');
  expect((await store.accounts.findByUsername('𝐚𝐥𝐢𝐜𝐞'))?.id).toBe('op');
  expect((await store.accounts.findByUpstreamIdentity('https://upstream.example', 'pat@acme.example'))?.source).toBe('unknown');
  expect((await store.accounts.findByUsername('legacy\u200bname'))?.id).toBe('odd');
  // An existing row stays usable: disabling it keeps its name and its origin.
  expect(await store.accounts.update('odd', { disabled: true })).toMatchObject({ username: 'legacy\u200bname', source: 'operator' });
}

/** A database as the version-1 build left it, holding `LEGACY`; returns how to open it. */
async function sqliteVersion1(driver: SqliteDriverName, dir: string): Promise<StorageConfig> {
  const file = join(dir, `v1-${driver}.sqlite`);
  const db = await openSqliteDriver(file, driver);
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  db.exec(SQLITE_MIGRATIONS.find((m) => m.version === 1)!.sql);
  db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, ?, 0)').run('initial');
  for (const [id, username, key, identity] of LEGACY) {
    db.prepare('INSERT INTO accounts (id, username, username_key, disabled, created_at, updated_at) VALUES (?, ?, ?, 0, 1, 1)').run(
      id,
      username,
      key,
    );
    if (identity) db.prepare('INSERT INTO account_identities (identity, account_id, position) VALUES (?, ?, 0)').run(identity, id);
  }
  db.close();
  return { kind: 'sqlite', file, driver };
}

async function postgresVersion1(schema: string): Promise<StorageConfig> {
  const q = `"${schema}"`;
  await withPgClient(async (client) => {
    await client.query(`CREATE SCHEMA ${q}`);
    await client.query(
      `CREATE TABLE ${q}.schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    await client.query(POSTGRES_MIGRATIONS.find((m) => m.version === 1)!.sql.replaceAll('{schema}', q));
    await client.query(`INSERT INTO ${q}.schema_migrations (version, name) VALUES (1, 'initial')`);
    for (const [id, username, key, identity] of LEGACY) {
      await client.query(
        `INSERT INTO ${q}.accounts (id, username, username_key, disabled, created_at, updated_at) VALUES ($1, $2, $3, false, 1, 1)`,
        [id, username, key],
      );
      if (identity)
        await client.query(`INSERT INTO ${q}.account_identities (identity, account_id, position) VALUES ($1, $2, 0)`, [identity, id]);
    }
  });
  return { kind: 'postgres', url: TEST_DATABASE_URL, schema };
}

const dir = scratchDir('source');
const schema = randomSchema('storage_source');
afterAll(() => dropSchema(schema));

const BACKENDS = [
  ...SQLITE_DRIVERS.map((c) => ({ name: caseName(c), skip: c.skip, version1: () => sqliteVersion1(c.driver, dir) })),
  { name: 'postgres', skip: undefined, version1: () => postgresVersion1(schema) },
];

describe.each(BACKENDS.map((b) => [b.name, b] as const))('migration 2 (account source), %s', (_name, { skip, version1 }) => {
  it.skipIf(skip !== undefined)('rows of a version-1 database get operator or unknown, and are found as before', async () => {
    const store = await openStore(await version1(), { cleanupIntervalSeconds: 0 });
    try {
      await expectMigrated(store);
    } finally {
      await store.close();
    }
  });
});
