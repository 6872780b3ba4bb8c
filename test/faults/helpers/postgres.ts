import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The shared server of the machine (trust auth). Tests create and drop their own schema. */
export const PG_BASE_URL = process.env.FAULTS_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface PgScope {
  schema: string;
  /** application_name of the AS pool: lets a test terminate exactly its own connections. */
  applicationName: string;
  /** Connection URL for the AS (the URL's application_name wins over the pool's own). */
  url: string;
  admin: pg.Client;
  /** Terminates every backend of this scope's AS pool; returns how many. */
  terminate(): Promise<number>;
  /** Backends of this scope currently connected. */
  connections(): Promise<number>;
  drop(): Promise<void>;
}

/**
 * Whether to run the PostgreSQL tests: when the shared PostgreSQL answers. Outside CI the PostgreSQL tests are skipped without
 * it (never faked); under CI (`CI` set, where `.ci/run` starts PostgreSQL) they run anyway and
 * fail, so a database that did not come up cannot pass as skipped tests.
 */
export async function shouldRunPgTests(): Promise<boolean> {
  if (process.env.CI) return true;
  const client = new pg.Client({ connectionString: PG_BASE_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function openPgScope(prefix: string): Promise<PgScope> {
  const id = `${prefix}_${randomBytes(4).toString('hex')}`;
  const schema = id.toLowerCase();
  const applicationName = `mcp-auth-kit-${id}`.replace(/_/g, '-');
  const url = `${PG_BASE_URL}?application_name=${encodeURIComponent(applicationName)}`;
  const admin = new pg.Client({ connectionString: PG_BASE_URL, application_name: `${applicationName}-admin` });
  await admin.connect();
  return {
    schema,
    applicationName,
    url,
    admin,
    async terminate() {
      const res = await admin.query(
        'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
        [applicationName],
      );
      return res.rows.filter((r: { ok: boolean }) => r.ok).length;
    },
    async connections() {
      const res = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
      return res.rows[0].n as number;
    },
    async drop() {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}
