/** Storage configuration from the environment (the runtime contract: `DATABASE_URL`, `DATA_DIR`). */
import { join, resolve } from 'node:path';
import { StorageError } from './errors.js';
import type { StorageConfig } from './types.js';

export const DEFAULT_DATA_DIR = '.data';
export const SQLITE_FILE_NAME = 'auth-server.sqlite';
export const DEFAULT_PG_SCHEMA = 'mcp_auth_kit';

/** `${DATA_DIR:-.data}/auth-server.sqlite`, resolved against the working directory. */
export function defaultSqliteFile(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(join(env.DATA_DIR?.trim() || DEFAULT_DATA_DIR, SQLITE_FILE_NAME));
}

/**
 * - `DATABASE_URL=postgres://…` / `postgresql://…` → PostgreSQL (schema from `DATABASE_SCHEMA`,
 *   default `mcp_auth_kit`);
 * - `DATABASE_URL=sqlite:<path>` → SQLite at that path;
 * - `DATABASE_URL=memory:` → in-process (tests only: nothing survives a restart);
 * - unset → SQLite at `${DATA_DIR:-.data}/auth-server.sqlite`.
 */
export function storageConfigFromEnv(env: NodeJS.ProcessEnv = process.env): StorageConfig {
  const url = env.DATABASE_URL?.trim();
  if (!url) return { kind: 'sqlite', file: defaultSqliteFile(env) };
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const schema = env.DATABASE_SCHEMA?.trim();
    return schema ? { kind: 'postgres', url, schema } : { kind: 'postgres', url };
  }
  if (/^sqlite:/i.test(url)) {
    const file = url.replace(/^sqlite:(\/\/)?/i, '');
    if (!file) throw new StorageError('DATABASE_URL sqlite: needs a file path', 'misconfigured');
    return { kind: 'sqlite', file: resolve(file) };
  }
  if (/^memory:?$/i.test(url)) return { kind: 'memory' };
  // Never echo the URL: it may carry a password.
  throw new StorageError('DATABASE_URL must start with postgres://, postgresql://, sqlite: or memory:', 'misconfigured');
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new StorageError('PostgreSQL schema must match [A-Za-z_][A-Za-z0-9_]{0,62}', 'misconfigured');
  }
  return schema;
}
