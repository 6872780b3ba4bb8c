/** The SQLite store's connection type and its per-connection statement cache. */
import type { SqliteDriver, SqliteStatement } from './driver.js';

export type Db = SqliteDriver;

/** A row that has not expired (`expires_at` in epoch ms, NULL for never). */
export const LIVE = '(expires_at IS NULL OR expires_at > @now)';

const statements = new WeakMap<Db, Map<string, SqliteStatement>>();
/**
 * The compiled statement for `sql` on this connection, compiled once: both drivers'
 * `prepare` compiles anew at every call, which costs more than running the small statements
 * of a token request. SQLite recompiles a cached statement by itself after a schema change.
 */
export function prepared(db: Db, sql: string): SqliteStatement {
  let cache = statements.get(db);
  if (cache === undefined) {
    cache = new Map();
    statements.set(db, cache);
  }
  let statement = cache.get(sql);
  if (statement === undefined) {
    statement = db.prepare(sql);
    cache.set(sql, statement);
  }
  return statement;
}
