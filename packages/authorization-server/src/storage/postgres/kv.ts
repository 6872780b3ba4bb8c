/**
 * The key-value store (entries that expire, atomic counters) in `kv`. Sets and increments of
 * concurrent requests (a refresh's grace claim and kept response, rate-limit and throttle
 * counters) go as one statement per kind, like the model statements (see batch.ts).
 */
import type { Pool } from 'pg';
import type { Clock } from '../clock.js';
import type { KeyValueEntry, KeyValueStore } from '../types.js';
import { Batcher, Gate } from './batch.js';
import { valuesList } from './batch-sql.js';
import { isConnectionLoss } from './reconnect.js';
import { prepared, repeatable } from './statements.js';

interface KvWrite {
  namespace: string;
  key: string;
  /** JSON text. */
  value: string;
  expiresAt: number;
}

interface KvIncrement extends KvWrite {
  now: number;
  by: number;
}

const kvKey = (input: { namespace: string; key: string }) => `${input.namespace}\u0000${input.key}`;

/** JSON number text, as `JSON.stringify` writes it (so `::numeric` cannot fail). */
const JSON_NUMBER = `'^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?$'`;

export class PgKv implements KeyValueStore {
  readonly #sets: Batcher<KvWrite, void>;
  readonly #increments: Batcher<KvIncrement, number>;

  constructor(
    private readonly pool: Pool,
    private readonly q: string,
    private readonly clock: Clock,
  ) {
    // One kv statement at a time per instance (its own place: kv and model statements of one
    // request never wait for each other's batches).
    const gate = new Gate(1);
    this.#sets = new Batcher<KvWrite, void>({ key: kvKey, one: (w) => this.setOne(w), many: (ws) => this.setMany(ws) }, gate);
    this.#increments = new Batcher<KvIncrement, number>(
      { key: kvKey, one: (i, batchError) => this.incrementOne(i, batchError), many: (is) => this.incrementMany(is) },
      gate,
    );
  }

  async get<T = unknown>(namespace: string, key: string): Promise<T | undefined> {
    const { rows } = await repeatable<{ value: string }>(
      this.pool,
      prepared(`SELECT value FROM ${this.q}.kv WHERE namespace = $1 AND key = $2 AND expires_at > $3`, [namespace, key, this.clock()]),
    );
    return rows[0] ? (JSON.parse(rows[0].value) as T) : undefined;
  }

  async set(namespace: string, key: string, value: unknown, ttlSeconds: number) {
    const expiresAt = Math.round(this.clock() + ttlSeconds * 1000);
    await this.#sets.submit({ namespace, key, value: JSON.stringify(value ?? null), expiresAt });
  }

  private static readonly SET_CONFLICT =
    'ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at';

  private async setOne(w: KvWrite): Promise<void> {
    await repeatable(
      this.pool,
      prepared(`INSERT INTO ${this.q}.kv (namespace, key, value, expires_at) VALUES ($1, $2, $3, $4) ${PgKv.SET_CONFLICT}`, [
        w.namespace,
        w.key,
        w.value,
        w.expiresAt,
      ]),
    );
  }

  /** Distinct keys (the batcher's rule), so no row is written twice by one statement. */
  private async setMany(ws: KvWrite[]): Promise<void[]> {
    const { list, params } = valuesList(
      ws.map((w) => [w.namespace, w.key, w.value, w.expiresAt]),
      ['text', 'text', 'text', 'bigint'],
    );
    await repeatable(
      this.pool,
      prepared(`INSERT INTO ${this.q}.kv (namespace, key, value, expires_at) SELECT * FROM ${list} AS v ${PgKv.SET_CONFLICT}`, params),
    );
    return ws.map(() => undefined);
  }

  async increment(namespace: string, key: string, by: number, ttlSeconds: number) {
    const now = this.clock();
    return this.#increments.submit({
      namespace,
      key,
      value: JSON.stringify(by),
      expiresAt: Math.round(now + ttlSeconds * 1000),
      now,
      by,
    });
  }

  /** A live numeric counter grows by the proposed row's value (`by`), anything else restarts at it; `now` is the named parameter. */
  private static incrementConflict(now: string): string {
    const live = `kv.expires_at > ${now} AND kv.value ~ ${JSON_NUMBER}`;
    return `ON CONFLICT (namespace, key) DO UPDATE SET
           value = CASE WHEN ${live} THEN (kv.value::numeric + EXCLUDED.value::numeric)::text ELSE EXCLUDED.value END,
           expires_at = CASE WHEN ${live} THEN kv.expires_at ELSE EXCLUDED.expires_at END`;
  }

  /**
   * One statement (row-locked by ON CONFLICT). Not retried after a dropped connection, alone
   * or after its batch: the first run may have counted already.
   */
  private async incrementOne(i: KvIncrement, batchError?: unknown): Promise<number> {
    if (batchError !== undefined && (isConnectionLoss(batchError) || (batchError as { committed?: boolean }).committed)) throw batchError;
    const { rows } = await this.pool.query<{ value: string }>(
      prepared(
        `INSERT INTO ${this.q}.kv AS kv (namespace, key, value, expires_at) VALUES ($1, $2, $3, $4)
         ${PgKv.incrementConflict('$5')}
         RETURNING value`,
        [i.namespace, i.key, i.value, i.expiresAt, i.now],
      ),
    );
    return Number(rows[0]!.value);
  }

  /**
   * Several counters (distinct keys, in key order) in one statement. Their liveness is judged
   * at the latest of the inputs' clocks (a few milliseconds apart at most: as if the earlier
   * requests had come that much later).
   */
  private async incrementMany(is: KvIncrement[]): Promise<number[]> {
    const { list, params } = valuesList(
      is.map((i) => [i.namespace, i.key, i.value, i.expiresAt]),
      ['text', 'text', 'text', 'bigint'],
    );
    const now = Math.max(...is.map((i) => i.now));
    const { rows } = await this.pool.query<{ namespace: string; key: string; value: string }>(
      prepared(
        `INSERT INTO ${this.q}.kv AS kv (namespace, key, value, expires_at) SELECT * FROM ${list} AS v
         ${PgKv.incrementConflict(`$${params.length + 1}::bigint`)}
         RETURNING kv.namespace, kv.key, kv.value`,
        [...params, now],
      ),
    );
    const byKey = new Map(rows.map((row) => [kvKey(row), Number(row.value)]));
    return is.map((i) => {
      const value = byKey.get(kvKey(i));
      // Unreachable (every row inserted or updated is returned); the statement has committed, so never run again.
      if (value === undefined) throw Object.assign(new Error('kv increment: a counter of the batch was not returned'), { committed: true });
      return value;
    });
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

  async list<T = unknown>(namespace: string): Promise<KeyValueEntry<T>[]> {
    const { rows } = await repeatable<{ key: string; value: string; expires_at: string | number }>(
      this.pool,
      prepared(`SELECT key, value, expires_at FROM ${this.q}.kv WHERE namespace = $1 AND expires_at > $2`, [namespace, this.clock()]),
    );
    return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as T, expiresAt: Number(r.expires_at) }));
  }
}
