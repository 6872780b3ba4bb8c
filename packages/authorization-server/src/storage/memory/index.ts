/**
 * In-process store for tests and throw-away runs. Nothing survives the process; values are
 * copied in and out as JSON so callers see exactly what a database would give back.
 */
import type { AdapterPayload } from 'oidc-provider';
import { conflict, newAccount, notFound, patchAccount, upstreamIdentityKey, usernameKey } from '../accounts.js';
import type { BackendParts } from '../assemble.js';
import { type Clock, epochSeconds } from '../clock.js';
import { isLive, type CookieKeyRecord, type KeyBackend } from '../keys.js';
import type { IndexedField, ModelBackend, ModelRow } from '../model-rows.js';
import type { AccountPatch, AccountRecord, AccountStore, KeyValueEntry, KeyValueStore, NewAccount, StoredSigningKey } from '../types.js';

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const live = (expiresAt: number | null, now: number) => expiresAt === null || expiresAt > now;
const modelKey = (model: string, id: string) => `${model}\u0000${id}`;

/** The row fields looked up by value: `findBy`'s two and the grant a token belongs to. */
const INDEXED = ['uid', 'userCode', 'grantId'] as const;

class MemoryModels implements ModelBackend {
  readonly rows = new Map<string, ModelRow>();
  /**
   * Row keys by model and indexed value. A scan of every row per lookup grew with the store: an
   * AS that ran a few thousand flows spent more on `findByUid` (every interaction step) than on
   * the rest of the request.
   */
  readonly #index = new Map<string, Set<string>>();

  async upsert(row: ModelRow): Promise<void> {
    const key = modelKey(row.model, row.id);
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
    const row = this.rows.get(modelKey(model, id));
    return row && live(row.expiresAt, now) ? row : undefined;
  }

  async find(model: string, id: string, now: number): Promise<AdapterPayload | undefined> {
    const row = this.liveRow(model, id, now);
    return row ? copy(row.payload) : undefined;
  }

  async findBy(model: string, field: IndexedField, value: string, now: number): Promise<AdapterPayload | undefined> {
    for (const key of this.#index.get(indexKey(field, model, value)) ?? []) {
      const row = this.rows.get(key);
      if (row !== undefined && live(row.expiresAt, now)) return copy(row.payload);
    }
    return undefined;
  }

  async consume(model: string, id: string, consumedAt: number, now: number): Promise<boolean> {
    const row = this.liveRow(model, id, now);
    if (!row || row.payload.consumed !== undefined) return false;
    row.payload = { ...row.payload, consumed: consumedAt };
    return true;
  }

  async destroy(model: string, id: string): Promise<void> {
    const key = modelKey(model, id);
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

class MemoryKeys implements KeyBackend {
  signing: StoredSigningKey[] = [];
  cookie: CookieKeyRecord[] = [];

  async readSigningKeys() {
    return copy(this.signing);
  }
  async mutateSigningKeys(change: (rows: StoredSigningKey[]) => StoredSigningKey[] | undefined) {
    const next = change(copy(this.signing));
    if (next) this.signing = copy(next);
    return copy(this.signing);
  }
  async readCookieKeys() {
    return copy(this.cookie);
  }
  async mutateCookieKeys(change: (rows: CookieKeyRecord[]) => CookieKeyRecord[] | undefined) {
    const next = change(copy(this.cookie));
    if (next) this.cookie = copy(next);
    return copy(this.cookie);
  }
}

class MemoryAccounts implements AccountStore {
  private readonly byId = new Map<string, AccountRecord>();
  constructor(private readonly clock: Clock) {}

  private findOther(id: string, predicate: (a: AccountRecord) => boolean): AccountRecord | undefined {
    for (const a of this.byId.values()) if (a.id !== id && predicate(a)) return a;
    return undefined;
  }

  private checkUnique(candidate: AccountRecord): void {
    const key = usernameKey(candidate.username);
    if (this.findOther(candidate.id, (a) => usernameKey(a.username) === key)) throw conflict('username');
    const ids = candidate.upstreamIdentities ?? [];
    if (this.findOther(candidate.id, (a) => (a.upstreamIdentities ?? []).some((i) => ids.includes(i)))) {
      throw conflict('upstream identity');
    }
  }

  async create(account: NewAccount): Promise<AccountRecord> {
    const record = newAccount(copy(account), epochSeconds(this.clock()));
    if (this.byId.has(record.id)) throw conflict('account id');
    this.checkUnique(record);
    this.byId.set(record.id, record);
    return copy(record);
  }

  async findById(id: string) {
    const a = this.byId.get(id);
    return a ? copy(a) : undefined;
  }

  async findByUsername(username: string) {
    const key = usernameKey(username);
    const a = this.findOther('', (x) => usernameKey(x.username) === key);
    return a ? copy(a) : undefined;
  }

  async findByUpstreamIdentity(issuer: string, subject: string) {
    const identity = upstreamIdentityKey(issuer, subject);
    const a = this.findOther('', (x) => (x.upstreamIdentities ?? []).includes(identity));
    return a ? copy(a) : undefined;
  }

  async list() {
    return [...this.byId.values()].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(copy);
  }

  async update(id: string, patch: AccountPatch) {
    const existing = this.byId.get(id);
    if (!existing) throw notFound();
    const record = patchAccount(existing, copy(patch), epochSeconds(this.clock()));
    this.checkUnique(record);
    this.byId.set(id, record);
    return copy(record);
  }
}

class MemoryKv implements KeyValueStore {
  readonly entries = new Map<string, { value: string; expiresAt: number }>();
  constructor(private readonly clock: Clock) {}

  private live(namespace: string, key: string) {
    const e = this.entries.get(modelKey(namespace, key));
    return e && e.expiresAt > this.clock() ? e : undefined;
  }

  async get<T = unknown>(namespace: string, key: string): Promise<T | undefined> {
    const e = this.live(namespace, key);
    return e ? (JSON.parse(e.value) as T) : undefined;
  }

  async set(namespace: string, key: string, value: unknown, ttlSeconds: number): Promise<void> {
    this.entries.set(modelKey(namespace, key), { value: JSON.stringify(value ?? null), expiresAt: this.clock() + ttlSeconds * 1000 });
  }

  async increment(namespace: string, key: string, by: number, ttlSeconds: number): Promise<number> {
    const e = this.live(namespace, key);
    const previous = e ? (JSON.parse(e.value) as unknown) : undefined;
    if (e && typeof previous === 'number') {
      e.value = JSON.stringify(previous + by);
      return previous + by;
    }
    this.entries.set(modelKey(namespace, key), { value: JSON.stringify(by), expiresAt: this.clock() + ttlSeconds * 1000 });
    return by;
  }

  async decrement(namespace: string, key: string, by: number): Promise<number | undefined> {
    const e = this.live(namespace, key);
    const previous = e ? (JSON.parse(e.value) as unknown) : undefined;
    if (!e || typeof previous !== 'number') return undefined;
    const next = Math.max(0, previous - by);
    e.value = JSON.stringify(next);
    return next;
  }

  async delete(namespace: string, key: string): Promise<void> {
    this.entries.delete(modelKey(namespace, key));
  }

  async list<T = unknown>(namespace: string): Promise<KeyValueEntry<T>[]> {
    const start = modelKey(namespace, '');
    const now = this.clock();
    const out: KeyValueEntry<T>[] = [];
    for (const [k, e] of this.entries) {
      if (k.startsWith(start) && e.expiresAt > now)
        out.push({ key: k.slice(start.length), value: JSON.parse(e.value) as T, expiresAt: e.expiresAt });
    }
    return out;
  }

  cleanup(now: number): number {
    let n = 0;
    for (const [k, e] of this.entries) {
      if (e.expiresAt <= now) {
        this.entries.delete(k);
        n++;
      }
    }
    return n;
  }
}

export function openMemoryBackend(clock: Clock): BackendParts {
  const models = new MemoryModels();
  const keys = new MemoryKeys();
  const kv = new MemoryKv(clock);
  return {
    kind: 'memory',
    models,
    keys,
    accounts: new MemoryAccounts(clock),
    kv,
    ping: async () => {},
    async cleanup(now: number) {
      const before = keys.signing.length;
      keys.signing = keys.signing.filter((k) => isLive(k, epochSeconds(now)));
      return models.cleanup(now) + kv.cleanup(now) + (before - keys.signing.length);
    },
    close: async () => {},
  };
}
