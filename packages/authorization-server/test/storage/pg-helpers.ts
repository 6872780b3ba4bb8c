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
