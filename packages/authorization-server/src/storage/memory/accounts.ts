/** Local accounts in memory; uniqueness is checked by scanning (a test store stays small). */
import { conflict, newAccount, notFound, patchAccount, upstreamIdentityKey, usernameKey } from '../accounts.js';
import { type Clock, epochSeconds } from '../clock.js';
import type { AccountPatch, AccountRecord, AccountStore, NewAccount } from '../types.js';
import { copy } from './copy.js';

export class MemoryAccounts implements AccountStore {
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
