/** Third-party connections in memory, one per (account, provider). */
import { nextConnection } from '../connections.js';
import { type Clock, epochSeconds } from '../clock.js';
import type { ConnectionInput, ConnectionRecord, ConnectionStore } from '../types.js';
import { copy, pairKey } from './copy.js';

export class MemoryConnections implements ConnectionStore {
  private readonly rows = new Map<string, ConnectionRecord>();
  constructor(private readonly clock: Clock) {}

  private write(input: ConnectionInput, version: number | undefined): ConnectionRecord | undefined {
    const existing = this.rows.get(pairKey(input.accountId, input.provider));
    const record = nextConnection(copy(input), existing, version, epochSeconds(this.clock()));
    if (!record) return undefined;
    this.rows.set(pairKey(record.accountId, record.provider), record);
    return copy(record);
  }

  async put(input: ConnectionInput) {
    return this.write(input, undefined)!;
  }

  async replace(input: ConnectionInput, version: number) {
    return this.write(input, version);
  }

  async get(accountId: string, provider: string) {
    const row = this.rows.get(pairKey(accountId, provider));
    return row ? copy(row) : undefined;
  }

  async list(accountId: string) {
    return [...this.rows.values()]
      .filter((r) => r.accountId === accountId)
      .sort((a, b) => (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0))
      .map(copy);
  }

  async delete(accountId: string, provider: string) {
    return this.rows.delete(pairKey(accountId, provider));
  }

  async deleteAccount(accountId: string) {
    let n = 0;
    for (const [key, row] of this.rows) {
      if (row.accountId !== accountId) continue;
      this.rows.delete(key);
      n++;
    }
    return n;
  }
}
