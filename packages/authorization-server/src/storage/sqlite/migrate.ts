/** Start-up migrations: the pending steps of `SQLITE_MIGRATIONS`, in one IMMEDIATE transaction. */
import { pendingMigrations, SQLITE_MIGRATIONS } from '../migrations.js';
import type { Db } from './statements.js';

export function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  db.transaction(() => {
    const applied = (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version);
    for (const m of pendingMigrations(SQLITE_MIGRATIONS, applied)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
    }
  }, 'immediate');
}
