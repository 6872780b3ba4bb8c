/** oidc-provider's models in a map, with an index for the values rows are looked up by. */
import type { AdapterPayload } from 'oidc-provider';
import type { IndexedField, ModelBackend, ModelRow, Stamp } from '../model-rows.js';
import { copy, pairKey } from './copy.js';

const live = (expiresAt: number | null, now: number) => expiresAt === null || expiresAt > now;

/** The row fields looked up by value: `findBy`'s two and the grant a token belongs to. */
const INDEXED = ['uid', 'userCode', 'grantId'] as const;

export class MemoryModels implements ModelBackend {
  readonly rows = new Map<string, ModelRow>();
  /**
   * Row keys by model and indexed value. A scan of every row per lookup grew with the store: an
   * AS that ran a few thousand flows spent more on `findByUid` (every interaction step) than on
   * the rest of the request.
   */
  readonly #index = new Map<string, Set<string>>();

  async upsert(row: ModelRow): Promise<void> {
    this.#put(row);
  }

  #put(row: ModelRow): void {
    const key = pairKey(row.model, row.id);
    const previous = this.rows.get(key);
    this.rows.set(key, { ...row, payload: copy(row.payload) });
    for (const field of INDEXED) {
      // kept in place when unchanged, so a lookup still meets rows in the order they came
      if (previous?.[field] === row[field]) continue;
      if (previous !== undefined) this.#unindex(field, previous, key);
      const value = row[field];
      if (value !== null) {
        const entry = indexKey(field, row.model, value);
        const keys = this.#index.get(entry);
        if (keys === undefined) this.#index.set(entry, new Set([key]));
        else keys.add(key);
      }
    }
  }

  #unindex(field: (typeof INDEXED)[number], row: ModelRow, key: string): void {
    const value = row[field];
    if (value === null) return;
    const entry = indexKey(field, row.model, value);
    const keys = this.#index.get(entry);
    keys?.delete(key);
    if (keys?.size === 0) this.#index.delete(entry);
  }

  #delete(key: string, row: ModelRow): void {
    this.rows.delete(key);
    for (const field of INDEXED) this.#unindex(field, row, key);
  }

  private liveRow(model: string, id: string, now: number): ModelRow | undefined {
    const row = this.rows.get(pairKey(model, id));
    return row && live(row.expiresAt, now) ? row : undefined;
  }

  async find(model: string, id: string, now: number): Promise<AdapterPayload | undefined> {
    const row = this.liveRow(model, id, now);
    return row ? copy(row.payload) : undefined;
  }

  async list(model: string, now: number) {
    return [...this.rows.values()]
      .filter((row) => row.model === model && live(row.expiresAt, now))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((row) => ({ id: row.id, payload: copy(row.payload) }));
  }

  async findBy(model: string, field: IndexedField, value: string, now: number): Promise<AdapterPayload | undefined> {
    for (const key of this.#index.get(indexKey(field, model, value)) ?? []) {
      const row = this.rows.get(key);
      if (row !== undefined && live(row.expiresAt, now)) return copy(row.payload);
    }
    return undefined;
  }

  async consume(model: string, id: string, consumedAt: number, now: number): Promise<boolean> {
    return this.#stamp({ model, id, consumedAt, now });
  }

  #stamp({ model, id, consumedAt, now }: Stamp): boolean {
    const row = this.liveRow(model, id, now);
    if (!row || row.payload.consumed !== undefined) return false;
    row.payload = { ...row.payload, consumed: consumedAt };
    return true;
  }

  /**
   * Stamp and successor in one synchronous step, as the other backends do in one write: a
   * concurrent loser's revocation of the grant then always finds the winner's successor.
   */
  async rotate(stamp: Stamp, row: ModelRow): Promise<boolean> {
    if (!this.#stamp(stamp)) return false;
    this.#put(row);
    return true;
  }

  async destroy(model: string, id: string): Promise<void> {
    const key = pairKey(model, id);
    const row = this.rows.get(key);
    if (row !== undefined) this.#delete(key, row);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    for (const key of [...(this.#index.get(indexKey('grantId', '', grantId)) ?? [])]) {
      const row = this.rows.get(key);
      if (row !== undefined) this.#delete(key, row);
    }
  }

  cleanup(now: number): number {
    let n = 0;
    for (const [key, row] of this.rows) {
      if (!live(row.expiresAt, now)) {
        this.#delete(key, row);
        n++;
      }
    }
    return n;
  }
}

/** `findBy` looks up within one model; a grant's rows are found across models. */
function indexKey(field: (typeof INDEXED)[number], model: string, value: string): string {
  return field === 'grantId' ? `grantId\u0000${value}` : `${field}\u0000${model}\u0000${value}`;
}
