/** The CIMD trust policy and approval queue in memory. */
import { checkCimdStatus, cimdPolicyRecord, DEFAULT_CIMD_POLICY, decidedClient, seenClient } from '../cimd-trust.js';
import { type Clock, epochSeconds } from '../clock.js';
import type { CimdClientRecord, CimdClientStatus, CimdTrustPolicy, CimdTrustStore } from '../types.js';
import { copy } from './copy.js';

export class MemoryCimdTrust implements CimdTrustStore {
  private current: CimdTrustPolicy = DEFAULT_CIMD_POLICY;
  private readonly clients = new Map<string, CimdClientRecord>();
  constructor(private readonly clock: Clock) {}

  async policy() {
    return copy(this.current);
  }

  async setPolicy(policy: Omit<CimdTrustPolicy, 'updatedAt'>) {
    this.current = cimdPolicyRecord(copy(policy), epochSeconds(this.clock()));
    return copy(this.current);
  }

  async see(clientId: string, host: string, status: CimdClientStatus) {
    const record = seenClient(this.clients.get(clientId), clientId, host, status, epochSeconds(this.clock()));
    this.clients.set(clientId, record);
    return copy(record);
  }

  async get(clientId: string) {
    const record = this.clients.get(clientId);
    return record ? copy(record) : undefined;
  }

  async list(status?: CimdClientStatus) {
    if (status !== undefined) checkCimdStatus(status);
    return [...this.clients.values()]
      .filter((c) => status === undefined || c.status === status)
      .sort((a, b) => b.firstSeen - a.firstSeen || (a.clientId < b.clientId ? -1 : 1))
      .map(copy);
  }

  async decide(clientId: string, host: string, status: CimdClientStatus, by: string) {
    const record = decidedClient(this.clients.get(clientId), clientId, host, status, by, epochSeconds(this.clock()));
    this.clients.set(clientId, record);
    return copy(record);
  }

  async delete(clientId: string) {
    return this.clients.delete(clientId);
  }
}
