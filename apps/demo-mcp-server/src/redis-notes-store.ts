import { createHash } from 'node:crypto';
import type { RedisCommandConnection } from '@mcp-auth-kit/resource-server/redis';
import { DEMO_DEFAULTS } from './defaults.js';
import type { Note, NotesRepository } from './notes-store.js';

export interface RedisNotesStoreOptions {
  /** A connected node-redis client. */
  client: RedisCommandConnection;
  /** Key prefix (default `mcp-auth-kit:`). */
  prefix?: string;
  /** Upper bound of notes kept per subject; the oldest are dropped beyond it (default 100). */
  maxNotesPerSubject?: number;
  now?: () => Date;
}

/**
 * Notes in Redis, so every replica behind a balancer sees the same notes: one list per subject
 * (keyed by a hash of it: a subject is caller-controlled text), ids from one atomic counter per
 * subject. Nothing expires: this is the demo's data, not a cache.
 */
export class RedisNotesStore implements NotesRepository {
  readonly #client: RedisCommandConnection;
  readonly #prefix: string;
  readonly #max: number;
  readonly #now: () => Date;
  constructor(options: RedisNotesStoreOptions) {
    this.#client = options.client;
    this.#prefix = `${options.prefix ?? DEMO_DEFAULTS.redisPrefix}notes:`;
    this.#max = options.maxNotesPerSubject ?? DEMO_DEFAULTS.maxNotesPerSubject;
    this.#now = options.now ?? (() => new Date());
  }

  #key(subject: string, kind: 'list' | 'seq'): string {
    return `${this.#prefix}${kind}:${createHash('sha256').update(subject).digest('base64url')}`;
  }

  async list(subject: string): Promise<readonly Note[]> {
    const items = (await this.#client.sendCommand(['LRANGE', this.#key(subject, 'list'), '0', '-1'])) as string[];
    return items.map((item) => JSON.parse(item) as Note);
  }

  async add(subject: string, text: string): Promise<Note> {
    const seq = await this.#client.sendCommand(['INCR', this.#key(subject, 'seq')]);
    const note: Note = { id: `note-${String(seq)}`, text, createdAt: this.#now().toISOString() };
    const list = this.#key(subject, 'list');
    await this.#client.sendCommand(['RPUSH', list, JSON.stringify(note)]);
    await this.#client.sendCommand(['LTRIM', list, String(-this.#max), '-1']);
    return note;
  }
}
