import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openStore, type Store } from '../../src/storage/index.js';

/** The machine's PostgreSQL (trust auth). Override with TEST_DATABASE_URL. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A random schema name for one test run (dropped by `dropSchema`). */
export function randomSchema(prefix = 'storage_test'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** `run` on a connection of its own (closed afterwards): set-up and checks outside the store. */
export async function withPgClient<T>(run: (client: pg.Client) => Promise<T>, url: string = TEST_DATABASE_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await withPgClient((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
}

export async function schemaExists(schema: string): Promise<boolean> {
  const { rows } = await withPgClient((client) => client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]));
  return rows.length === 1;
}

/**
 * A PostgreSQL store in a schema of its own for the enclosing `describe`: opened before its
 * tests, closed and dropped after them. `url` adds connection options (an application name).
 */
export function pgStoreForSuite(prefix: string, url: string = TEST_DATABASE_URL): { readonly schema: string; readonly store: Store } {
  const schema = randomSchema(prefix);
  let store: Store | undefined;
  beforeAll(async () => {
    store = await openStore({ kind: 'postgres', url, schema });
  });
  afterAll(async () => {
    await store?.close();
    await dropSchema(schema);
  });
  return {
    schema,
    get store() {
      if (store === undefined) throw new Error('the suite store is open only while its tests run');
      return store;
    },
  };
}

/** A statement the driver was given: its text (whitespace collapsed) and parameters. */
export interface RecordedStatement {
  text: string;
  values: unknown[];
}

/**
 * The statements sent through `pg` while `run` runs, counted at the driver
 * (`pg.Client.prototype.query`, through which every pooled statement goes). Only the caller's
 * store may talk to PostgreSQL meanwhile.
 */
export async function recordStatements<T>(run: () => Promise<T>): Promise<{ result: T; statements: RecordedStatement[] }> {
  const statements: RecordedStatement[] = [];
  const original = pg.Client.prototype.query;
  const recording = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string; values?: unknown[] };
    const text = typeof config === 'string' ? config : String(config?.text);
    const values = (typeof config === 'string' ? args[1] : config?.values) as unknown[] | undefined;
    statements.push({ text: text.replace(/\s+/g, ' '), values: values ?? [] });
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
  pg.Client.prototype.query = recording as typeof original;
  try {
    return { result: await run(), statements };
  } finally {
    pg.Client.prototype.query = original;
  }
}
