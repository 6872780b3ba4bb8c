/** The key-value store (entries that expire, atomic counters) in `kv`. */
import type { Pool } from 'pg';
import type { Clock } from '../clock.js';
import type { KeyValueStore } from '../types.js';
import { prepared, repeatable } from './statements.js';

/** JSON number text, as `JSON.stringify` writes it (so `::numeric` cannot fail). */
const JSON_NUMBER = `'^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?$'`;

export class PgKv implements KeyValueStore {
  constructor(
    private readonly pool: Pool,
    private readonly q: string,
    private readonly clock: Clock,
  ) {}

  async get<T = unknown>(namespace: string, key: string): Promise<T | undefined> {
    const { rows } = await repeatable<{ value: string }>(
      this.pool,
      prepared(`SELECT value FROM ${this.q}.kv WHERE namespace = $1 AND key = $2 AND expires_at > $3`, [namespace, key, this.clock()]),
    );
    return rows[0] ? (JSON.parse(rows[0].value) as T) : undefined;
  }

  async set(namespace: string, key: string, value: unknown, ttlSeconds: number) {
    await repeatable(
      this.pool,
      prepared(
        `INSERT INTO ${this.q}.kv (namespace, key, value, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
        [namespace, key, JSON.stringify(value ?? null), Math.round(this.clock() + ttlSeconds * 1000)],
      ),
    );
  }

  async increment(namespace: string, key: string, by: number, ttlSeconds: number) {
    const now = this.clock();
    // One statement (row-locked by ON CONFLICT): a live numeric counter grows, anything else restarts at `by`.
    const live = `kv.expires_at > $5 AND kv.value ~ ${JSON_NUMBER}`;
    // Not retried after a dropped connection: the first run may have counted already.
    const { rows } = await this.pool.query<{ value: string }>(
      prepared(
        `INSERT INTO ${this.q}.kv AS kv (namespace, key, value, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (namespace, key) DO UPDATE SET
           value = CASE WHEN ${live} THEN (kv.value::numeric + $6::numeric)::text ELSE EXCLUDED.value END,
           expires_at = CASE WHEN ${live} THEN kv.expires_at ELSE EXCLUDED.expires_at END
         RETURNING value`,
        [namespace, key, JSON.stringify(by), Math.round(now + ttlSeconds * 1000), now, by],
      ),
    );
    return Number(rows[0]!.value);
  }

  async decrement(namespace: string, key: string, by: number) {
    // Only a live numeric counter changes (row-locked by UPDATE): nothing is created, no window restarts.
    // Not retried after a dropped connection: the first run may have counted already.
    const { rows } = await this.pool.query<{ value: string }>(
      prepared(
        `UPDATE ${this.q}.kv AS kv SET value = GREATEST(0, kv.value::numeric - $3::numeric)::text
         WHERE kv.namespace = $1 AND kv.key = $2 AND kv.expires_at > $4 AND kv.value ~ ${JSON_NUMBER}
         RETURNING value`,
        [namespace, key, by, this.clock()],
      ),
    );
    return rows[0] ? Number(rows[0].value) : undefined;
  }

  async delete(namespace: string, key: string) {
    await repeatable(this.pool, prepared(`DELETE FROM ${this.q}.kv WHERE namespace = $1 AND key = $2`, [namespace, key]));
  }
}
