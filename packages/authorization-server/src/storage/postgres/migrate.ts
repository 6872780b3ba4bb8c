import type { Pool } from 'pg';
import { pendingMigrations, POSTGRES_MIGRATIONS } from '../migrations.js';
import { inTransaction } from './statements.js';

/**
 * Creates the schema if missing and applies the pending migrations, under an advisory lock so
 * that instances starting together apply each migration once.
 */
export async function migrate(pool: Pool, schema: string, q: string): Promise<void> {
  await inTransaction(pool, `mcp-auth-kit:migrate:${schema}`, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${q}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${q}.schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const applied = (await client.query<{ version: number }>(`SELECT version FROM ${q}.schema_migrations`)).rows.map((r) => r.version);
    for (const m of pendingMigrations(POSTGRES_MIGRATIONS, applied)) {
      await client.query(m.sql.replaceAll('{schema}', q));
      await client.query(`INSERT INTO ${q}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
  });
}
