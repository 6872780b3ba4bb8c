import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSqliteFile, storageConfigFromEnv, StorageError } from '../../src/storage/index.js';

describe('storageConfigFromEnv (runtime contract: DATABASE_URL, DATA_DIR)', () => {
  it('defaults to SQLite under .data/', () => {
    expect(storageConfigFromEnv({})).toEqual({ kind: 'sqlite', file: resolve('.data/auth-server.sqlite') });
  });
  it('honours DATA_DIR', () => {
    expect(storageConfigFromEnv({ DATA_DIR: '/var/lib/mcp' })).toEqual({ kind: 'sqlite', file: '/var/lib/mcp/auth-server.sqlite' });
    expect(defaultSqliteFile({ DATA_DIR: '/srv' })).toBe('/srv/auth-server.sqlite');
  });
  it('postgres:// and postgresql:// select PostgreSQL, with DATABASE_SCHEMA', () => {
    expect(storageConfigFromEnv({ DATABASE_URL: 'postgres://u@127.0.0.1/db' })).toEqual({
      kind: 'postgres',
      url: 'postgres://u@127.0.0.1/db',
    });
    expect(storageConfigFromEnv({ DATABASE_URL: 'postgresql://u@127.0.0.1/db', DATABASE_SCHEMA: 'tenant_a' })).toEqual({
      kind: 'postgres',
      url: 'postgresql://u@127.0.0.1/db',
      schema: 'tenant_a',
    });
  });
  it('sqlite: and memory: URLs', () => {
    expect(storageConfigFromEnv({ DATABASE_URL: 'sqlite:/tmp/x.sqlite' })).toEqual({ kind: 'sqlite', file: '/tmp/x.sqlite' });
    expect(storageConfigFromEnv({ DATABASE_URL: 'memory:' })).toEqual({ kind: 'memory' });
  });
  it('an unknown scheme is refused without echoing the URL (it may hold a password)', () => {
    let error: unknown;
    try {
      storageConfigFromEnv({ DATABASE_URL: 'mysql://admin:s3cret-pw@db/x' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('misconfigured');
    expect((error as Error).message).not.toContain('s3cret-pw');
  });
});
