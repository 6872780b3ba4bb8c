/** The key-value store (entries that expire, atomic counters) in `kv`; writes join the commit group. */
import type { Clock } from '../clock.js';
import type { KeyValueEntry, KeyValueStore } from '../types.js';
import type { CommitGroup } from './commit-group.js';
import { type Db, prepared } from './statements.js';

export class SqliteKv implements KeyValueStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly writes: CommitGroup,
  ) {}

  async get<T = unknown>(namespace: string, key: string): Promise<T | undefined> {
    const row = prepared(this.db, 'SELECT value FROM kv WHERE namespace = ? AND key = ? AND expires_at > ?').get(
      namespace,
      key,
      this.clock(),
    ) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  async set(namespace: string, key: string, value: unknown, ttlSeconds: number) {
    const params = [namespace, key, JSON.stringify(value ?? null), this.clock() + ttlSeconds * 1000];
    await this.writes.submit(() =>
      prepared(
        this.db,
        `INSERT INTO kv (namespace, key, value, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
      ).run(...params),
    );
  }

  async increment(namespace: string, key: string, by: number, ttlSeconds: number) {
    const now = this.clock();
    // One statement: a live numeric counter grows, anything else (absent, expired, not a number) restarts at `by`.
    const params = { namespace, key, initial: JSON.stringify(by), expiresAt: now + ttlSeconds * 1000, now, by };
    const row = await this.writes.submit(
      () =>
        prepared(
          this.db,
          `INSERT INTO kv (namespace, key, value, expires_at) VALUES (@namespace, @key, @initial, @expiresAt)
           ON CONFLICT (namespace, key) DO UPDATE SET
             value = CASE WHEN kv.expires_at > @now AND json_type(kv.value) IN ('integer', 'real')
                          THEN CAST(kv.value + @by AS TEXT) ELSE excluded.value END,
             expires_at = CASE WHEN kv.expires_at > @now AND json_type(kv.value) IN ('integer', 'real')
                          THEN kv.expires_at ELSE excluded.expires_at END
           RETURNING value`,
        ).get(params) as { value: string },
    );
    return Number(JSON.parse(row.value));
  }

  async decrement(namespace: string, key: string, by: number) {
    // Only a live numeric counter changes: nothing is created, no window restarts.
    const params = { namespace, key, by, now: this.clock() };
    const row = await this.writes.submit(
      () =>
        prepared(
          this.db,
          `UPDATE kv SET value = CAST(MAX(0, kv.value - @by) AS TEXT)
           WHERE namespace = @namespace AND key = @key AND expires_at > @now AND json_type(value) IN ('integer', 'real')
           RETURNING value`,
        ).get(params) as { value: string } | undefined,
    );
    return row ? Number(JSON.parse(row.value)) : undefined;
  }

  async delete(namespace: string, key: string) {
    await this.writes.submit(() => prepared(this.db, 'DELETE FROM kv WHERE namespace = ? AND key = ?').run(namespace, key));
  }

  async list<T = unknown>(namespace: string): Promise<KeyValueEntry<T>[]> {
    const rows = prepared(this.db, 'SELECT key, value, expires_at FROM kv WHERE namespace = ? AND expires_at > ?').all(
      namespace,
      this.clock(),
    ) as { key: string; value: string; expires_at: number | bigint }[];
    return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as T, expiresAt: Number(r.expires_at) }));
  }
}
