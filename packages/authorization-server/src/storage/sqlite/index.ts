/**
 * Embedded store: one SQLite file (WAL mode), the default for a single AS instance, on
 * `node:sqlite` or better-sqlite3 (`driver.ts`). Both drivers are synchronous, so each
 * method is one short synchronous step and every read-modify-write runs in an IMMEDIATE
 * transaction (safe across processes sharing the file).
 */
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BackendParts } from '../assemble.js';
import { type Clock, epochSeconds } from '../clock.js';
import { StorageError } from '../errors.js';
import { SqliteAccounts } from './accounts.js';
import { SqliteAudit } from './audit.js';
import { SqliteCimdTrust } from './cimd-trust.js';
import { CommitGroup } from './commit-group.js';
import { SqliteConnections } from './connections.js';
import { openSqliteDriver, type SqliteDriverName } from './driver.js';
import { SqliteKeys } from './keys.js';
import { SqliteKv } from './kv.js';
import { migrate } from './migrate.js';
import { SqliteModels } from './models.js';
import { prepared } from './statements.js';

export async function openSqliteBackend(file: string, clock: Clock, driver?: SqliteDriverName): Promise<BackendParts> {
  if (typeof file !== 'string' || file === '') throw new StorageError('sqlite storage needs a file path', 'misconfigured');
  const dir = dirname(file);
  // The file holds private signing keys: keep the folder and file private to this user.
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const created = !existsSync(file);
  const db = await openSqliteDriver(file, driver);
  try {
    if (created) chmodSync(file, 0o600);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA busy_timeout = 5000');
    db.exec('PRAGMA foreign_keys = ON');
    db.exec('PRAGMA synchronous = NORMAL');
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }

  const writes = new CommitGroup(db);
  return {
    kind: 'sqlite',
    models: new SqliteModels(db, writes),
    keys: new SqliteKeys(db),
    accounts: new SqliteAccounts(db, clock),
    connections: new SqliteConnections(db, clock),
    audit: new SqliteAudit(db),
    cimdTrust: new SqliteCimdTrust(db, clock),
    kv: new SqliteKv(db, clock, writes),
    ping: async () => {
      prepared(db, 'SELECT 1').get();
    },
    async cleanup(now: number) {
      return db.transaction(() => {
        const models = db.prepare('DELETE FROM oidc_models WHERE expires_at IS NOT NULL AND expires_at <= ?').run(now).changes;
        const kv = db.prepare('DELETE FROM kv WHERE expires_at <= ?').run(now).changes;
        const keys = db.prepare("DELETE FROM signing_keys WHERE status = 'retired' AND retire_after <= ?").run(epochSeconds(now)).changes;
        return Number(models) + Number(kv) + Number(keys);
      });
    },
    close: async () => {
      writes.flush();
      db.close();
    },
  };
}
