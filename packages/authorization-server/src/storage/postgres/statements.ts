/**
 * How the PostgreSQL store runs its statements: named (prepared) statements, retries after a
 * dropped connection where a statement is safe to repeat, and transactions under advisory locks.
 */
import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { isConnectionLoss, retryOnConnectionLoss } from './reconnect.js';

/** A row's liveness; `$NOW` is replaced by the placeholder or column holding the current time. */
export const LIVE = '(expires_at IS NULL OR expires_at > $NOW)';

const statementNames = new Map<string, string>();
/**
 * A named statement: each pooled connection parses and plans it once, then only binds and runs
 * it (the per-request statements spend a good part of their time in parse and plan otherwise).
 * The name is derived from the text (schema included), so one name never means two texts.
 * Only for statements that name their columns: a cached `SELECT *` would fail once a
 * migration adds a column.
 */
export function prepared(text: string, values: unknown[]): QueryConfig {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `mak_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/**
 * A statement that is safe to run twice (a read, an upsert of given values, a delete by key):
 * retried on another connection when its connection was dropped (see reconnect.ts).
 */
export function repeatable<R extends QueryResultRow>(
  pool: Pool,
  config: QueryConfig | string,
  values?: unknown[],
): Promise<QueryResult<R>> {
  return retryOnConnectionLoss(() => (typeof config === 'string' ? pool.query<R>(config, values) : pool.query<R>(config)));
}

/**
 * A statement on the pool is {@link repeatable}; inside a transaction it runs as is (a lost
 * transaction connection fails the whole transaction, which its caller may start over).
 */
export function onPoolOrTransaction<R extends QueryResultRow>(
  pool: Pool,
  client: Pool | PoolClient,
  sql: string,
  values?: unknown[],
): Promise<QueryResult<R>> {
  return client === pool ? repeatable<R>(pool, sql, values) : client.query<R>(sql, values);
}

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '23505';
}

/** Runs `fn` in a transaction; with `lock`, first takes that advisory lock for the transaction. */
export async function inTransaction<T>(pool: Pool, lock: string | undefined, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await retryOnConnectionLoss(() => begin(pool));
  try {
    if (lock) await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lock]);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A pooled connection with a transaction open. A connection found dead at BEGIN is discarded
 * (nothing ran on it yet, so starting over on another one is always safe).
 */
async function begin(pool: Pool): Promise<PoolClient> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    return client;
  } catch (error) {
    client.release(isConnectionLoss(error) ? (error as Error) : undefined);
    throw error;
  }
}
