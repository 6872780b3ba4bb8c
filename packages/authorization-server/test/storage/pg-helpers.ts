import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The machine's PostgreSQL (trust auth). Override with TEST_DATABASE_URL. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A random schema name for one test run (dropped by `dropSchema`). */
export function randomSchema(prefix = 'storage_test'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

export async function schemaExists(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    return rows.length === 1;
  } finally {
    await client.end();
  }
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
