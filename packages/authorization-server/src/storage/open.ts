import { assembleStore, type BackendParts, type OpenStoreOptions } from './assemble.js';
import { systemClock } from './clock.js';
import { StorageError } from './errors.js';
import { openMemoryBackend } from './memory/index.js';
import type { StorageConfig, Store } from './types.js';

/**
 * Opens (and migrates) the configured store. SQLite and PostgreSQL drivers are loaded only
 * when chosen, so a memory-only user never loads a native module (and a SQLite user on
 * Node ≥ 22.13 neither: `node:sqlite` is built in).
 */
export async function openStore(config: StorageConfig, options: OpenStoreOptions = {}): Promise<Store> {
  const clock = options.clock ?? systemClock;
  let parts: BackendParts;
  switch (config.kind) {
    case 'memory':
      parts = openMemoryBackend(clock);
      break;
    case 'sqlite': {
      const { openSqliteBackend } = await import('./sqlite/index.js');
      parts = await openSqliteBackend(config.file, clock, config.driver);
      break;
    }
    case 'postgres': {
      const { openPostgresBackend } = await import('./postgres/index.js');
      parts = await openPostgresBackend(config.url, config.schema, clock, options);
      break;
    }
    default:
      throw new StorageError(`storage kind ${(config as { kind: string }).kind} is not supported yet`, 'misconfigured');
  }
  return assembleStore(parts, clock, options);
}
