/**
 * Shared store on PostgreSQL, for several AS instances behind one load balancer.
 *
 * Everything lives in one schema (created if missing) so deployments and test runs can share
 * a database. Start-up migrations and key changes take transaction-scoped advisory locks, so
 * instances starting together apply each migration once and end with the same keys.
 */
import type { BackendParts, OpenStoreOptions } from '../assemble.js';
import { type Clock, epochSeconds } from '../clock.js';
import { checkSchemaName, DEFAULT_PG_SCHEMA } from '../config.js';
import { driverMissing } from '../errors.js';
import { PgAccounts } from './accounts.js';
import { PgAudit } from './audit.js';
import { PgCimdTrust } from './cimd-trust.js';
import { PgConnections } from './connections.js';
import { PgKeys } from './keys.js';
import { PgKv } from './kv.js';
import { migrate } from './migrate.js';
import { PgModels } from './models.js';
import { type PrefetchedAccount, type PrefetchedGrant, ReadAhead } from './read-ahead.js';
import { repeatable } from './statements.js';

export async function openPostgresBackend(
  url: string,
  schemaOption: string | undefined,
  clock: Clock,
  options: OpenStoreOptions,
): Promise<BackendParts> {
  const schema = checkSchemaName(schemaOption ?? DEFAULT_PG_SCHEMA);
  const q = `"${schema}"`;
  let pg: typeof import('pg').default;
  try {
    ({ default: pg } = await import('pg'));
  } catch (error) {
    throw driverMissing('PostgreSQL', 'pg', error);
  }
  const pool = new pg.Pool({ connectionString: url, max: 10, idleTimeoutMillis: 30_000, application_name: 'mcp-auth-kit' });
  // An idle client dropped by the server must not crash the process; the pool replaces it.
  pool.on('error', (error) => options.onError?.(error));
  try {
    await migrate(pool, schema, q);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }

  const grantsAhead = new ReadAhead<PrefetchedGrant>();
  const accountsAhead = new ReadAhead<PrefetchedAccount>();
  return {
    kind: 'postgres',
    models: new PgModels(pool, q, grantsAhead, accountsAhead),
    keys: new PgKeys(pool, q, `mcp-auth-kit:keys:${schema}`),
    accounts: new PgAccounts(pool, q, clock, accountsAhead),
    connections: new PgConnections(pool, q, clock),
    audit: new PgAudit(pool, q),
    cimdTrust: new PgCimdTrust(pool, q, clock),
    kv: new PgKv(pool, q, clock),
    ping: async () => {
      await repeatable(pool, 'SELECT 1');
    },
    async cleanup(now: number) {
      const models = await repeatable(pool, `DELETE FROM ${q}.oidc_models WHERE expires_at IS NOT NULL AND expires_at <= $1`, [now]);
      const kv = await repeatable(pool, `DELETE FROM ${q}.kv WHERE expires_at <= $1`, [now]);
      const keys = await repeatable(pool, `DELETE FROM ${q}.signing_keys WHERE status = 'retired' AND retire_after <= $1`, [
        epochSeconds(now),
      ]);
      return (models.rowCount ?? 0) + (kv.rowCount ?? 0) + (keys.rowCount ?? 0);
    },
    close: () => pool.end(),
  };
}
