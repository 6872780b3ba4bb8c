/** The CIMD trust policy (`cimd_trust_policy`, one row) and approval queue (`cimd_clients`). */
import * as shared from '../cimd-trust.js';
import { type Clock, epochSeconds } from '../clock.js';
import type { CimdClientRecord, CimdClientStatus, CimdTrustPolicy, CimdTrustStore } from '../types.js';
import { type Db, prepared } from './statements.js';

type Cell = string | number | null;

export class SqliteCimdTrust implements CimdTrustStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async policy() {
    return shared.cimdPolicyFromRow(
      prepared(this.db, 'SELECT * FROM cimd_trust_policy WHERE id = 1').get() as shared.CimdPolicyRow | undefined,
    );
  }

  async setPolicy(policy: Omit<CimdTrustPolicy, 'updatedAt'>) {
    const record = shared.cimdPolicyRecord(policy, epochSeconds(this.clock()));
    prepared(
      this.db,
      `INSERT OR REPLACE INTO cimd_trust_policy (id, allowed_hosts, denied_hosts, approval_required, updated_at, updated_by)
       VALUES (1, ?, ?, ?, ?, ?)`,
    ).run(
      JSON.stringify(record.allowedHosts),
      JSON.stringify(record.deniedHosts),
      record.approvalRequired ? 1 : 0,
      record.updatedAt!,
      record.updatedBy ?? null,
    );
    return record;
  }

  private row(clientId: string): CimdClientRecord | undefined {
    const row = prepared(this.db, `SELECT ${shared.CIMD_CLIENT_COLUMNS} FROM cimd_clients WHERE client_id = ?`).get(clientId) as
      | shared.CimdClientRow
      | undefined;
    return row ? shared.cimdClientFromRow(row) : undefined;
  }

  /** Read and write in one IMMEDIATE transaction (instances sharing the file see one order). */
  private write(clientId: string, next: (existing: CimdClientRecord | undefined, now: number) => CimdClientRecord): CimdClientRecord {
    return this.db.transaction(() => {
      const record = next(this.row(clientId), epochSeconds(this.clock()));
      prepared(this.db, `INSERT OR REPLACE INTO cimd_clients (${shared.CIMD_CLIENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(
        ...(shared.cimdClientValues(record) as Cell[]),
      );
      return record;
    }, 'immediate');
  }

  async see(clientId: string, host: string, status: CimdClientStatus) {
    return this.write(clientId, (existing, now) => shared.seenClient(existing, clientId, host, status, now));
  }

  async get(clientId: string) {
    return this.row(clientId);
  }

  async list(status?: CimdClientStatus) {
    if (status !== undefined) shared.checkCimdStatus(status);
    const sql = `SELECT ${shared.CIMD_CLIENT_COLUMNS} FROM cimd_clients ${status ? 'WHERE status = ?' : ''} ORDER BY first_seen DESC, client_id`;
    const rows = (status ? prepared(this.db, sql).all(status) : prepared(this.db, sql).all()) as shared.CimdClientRow[];
    return rows.map(shared.cimdClientFromRow);
  }

  async decide(clientId: string, host: string, status: CimdClientStatus, by: string) {
    return this.write(clientId, (existing, now) => shared.decidedClient(existing, clientId, host, status, by, now));
  }

  async delete(clientId: string) {
    return Number(prepared(this.db, 'DELETE FROM cimd_clients WHERE client_id = ?').run(clientId).changes) > 0;
  }
}
