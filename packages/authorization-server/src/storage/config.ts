/** Storage configuration from the environment (the runtime contract: `DATABASE_URL`, `DATA_DIR`). */
import { join, resolve } from 'node:path';
import { StorageError } from './errors.js';
import { DEFAULTS } from '../config/defaults.js';
import type { StorageConfig } from './types.js';

export const DEFAULT_DATA_DIR = DEFAULTS.storage.dataDir;
export const SQLITE_FILE_NAME = 'auth-server.sqlite';
export const DEFAULT_PG_SCHEMA = DEFAULTS.storage.postgresSchema;

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
const SCHEMA_RULE = 'PostgreSQL schema must match [A-Za-z_][A-Za-z0-9_]{0,62}';

function isOpenedStore(value: object): boolean {
  return typeof (value as { adapter?: unknown }).adapter === 'function' && typeof (value as { close?: unknown }).close === 'function';
}

/**
 * Problems of the `storage` option, for the one ConfigError of config/resolve.ts: found before
 * anything is opened, together with every other problem. (openStore and storageConfigFromEnv
 * keep throwing StorageError('misconfigured') for callers that use them directly.)
 */
export function storageProblems(storage: unknown): string[] {
  if (!storage || typeof storage !== 'object') return ['storage: required ({ kind: "memory" | "sqlite" | "postgres", … } or a Store)'];
  if (isOpenedStore(storage)) return [];
  const s = storage as { kind?: unknown; file?: unknown; url?: unknown; schema?: unknown; driver?: unknown };
  switch (s.kind) {
    case 'memory':
      return [];
    case 'sqlite': {
      const problems = typeof s.file === 'string' && s.file.trim() ? [] : ['storage.file: the SQLite database path is required'];
      if (s.driver !== undefined && s.driver !== 'node' && s.driver !== 'better-sqlite3')
        problems.push('storage.driver: must be "node" or "better-sqlite3"');
      return problems;
    }
    case 'postgres': {
      // Never echo the URL: it may carry a password.
      const problems =
        typeof s.url === 'string' && /^postgres(ql)?:\/\//i.test(s.url) ? [] : ['storage.url: must be a postgres:// or postgresql:// URL'];
      if (s.schema !== undefined && (typeof s.schema !== 'string' || !SCHEMA_NAME.test(s.schema)))
        problems.push(`storage.schema: ${SCHEMA_RULE}`);
      return problems;
    }
    default:
      return ['storage.kind: must be "memory", "sqlite" or "postgres" (or pass an open Store)'];
  }
}

export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new StorageError(SCHEMA_RULE, 'misconfigured');
  }
  return schema;
}
