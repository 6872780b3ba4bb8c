/** The CIMD trust policy (`cimd_trust_policy`, one row) and approval queue (`cimd_clients`). */
import {
  CIMD_CLIENT_COLUMNS,
  type CimdClientRow,
  type CimdPolicyRow,
  checkCimdStatus,
  cimdClientFromRow,
  cimdClientValues,
  cimdPolicyFromRow,
  cimdPolicyRecord,
  decidedClient,
  seenClient,
} from '../cimd-trust.js';
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
    return cimdPolicyFromRow(prepared(this.db, 'SELECT * FROM cimd_trust_policy WHERE id = 1').get() as CimdPolicyRow | undefined);
  }

  async setPolicy(policy: Omit<CimdTrustPolicy, 'updatedAt'>) {
    const record = cimdPolicyRecord(policy, epochSeconds(this.clock()));
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
    const row = prepared(this.db, `SELECT ${CIMD_CLIENT_COLUMNS} FROM cimd_clients WHERE client_id = ?`).get(clientId) as
      | CimdClientRow
      | undefined;
    return row ? cimdClientFromRow(row) : undefined;
  }

  /** Read and write in one IMMEDIATE transaction (instances sharing the file see one order). */
  private write(clientId: string, next: (existing: CimdClientRecord | undefined, now: number) => CimdClientRecord): CimdClientRecord {
    return this.db.transaction(() => {
      const record = next(this.row(clientId), epochSeconds(this.clock()));
      prepared(this.db, `INSERT OR REPLACE INTO cimd_clients (${CIMD_CLIENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(
        ...(cimdClientValues(record) as Cell[]),
      );
      return record;
    }, 'immediate');
  }

  async see(clientId: string, host: string, status: CimdClientStatus) {
    return this.write(clientId, (existing, now) => seenClient(existing, clientId, host, status, now));
  }

  async get(clientId: string) {
    return this.row(clientId);
  }

  async list(status?: CimdClientStatus) {
    if (status !== undefined) checkCimdStatus(status);
    const sql = `SELECT ${CIMD_CLIENT_COLUMNS} FROM cimd_clients ${status ? 'WHERE status = ?' : ''} ORDER BY first_seen DESC, client_id`;
    const rows = (status ? prepared(this.db, sql).all(status) : prepared(this.db, sql).all()) as CimdClientRow[];
    return rows.map(cimdClientFromRow);
  }

  async decide(clientId: string, host: string, status: CimdClientStatus, by: string) {
    return this.write(clientId, (existing, now) => decidedClient(existing, clientId, host, status, by, now));
  }

  async delete(clientId: string) {
    return Number(prepared(this.db, 'DELETE FROM cimd_clients WHERE client_id = ?').run(clientId).changes) > 0;
  }
}
