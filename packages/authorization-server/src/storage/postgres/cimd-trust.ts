/** The CIMD trust policy (`cimd_trust_policy`, one row) and approval queue (`cimd_clients`). */
import type { Pool } from 'pg';
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
import { inTransaction, repeatable } from './statements.js';

export class PgCimdTrust implements CimdTrustStore {
  constructor(
    private readonly pool: Pool,
    private readonly q: string,
    private readonly clock: Clock,
  ) {}

  async policy() {
    const { rows } = await repeatable<CimdPolicyRow>(this.pool, `SELECT * FROM ${this.q}.cimd_trust_policy WHERE id = 1`);
    return cimdPolicyFromRow(rows[0]);
  }

  async setPolicy(policy: Omit<CimdTrustPolicy, 'updatedAt'>) {
    const record = cimdPolicyRecord(policy, epochSeconds(this.clock()));
    await repeatable(
      this.pool,
      `INSERT INTO ${this.q}.cimd_trust_policy (id, allowed_hosts, denied_hosts, approval_required, updated_at, updated_by)
       VALUES (1, $1, $2, $3, $4, $5)
       ON CONFLICT (id) DO UPDATE SET allowed_hosts = $1, denied_hosts = $2, approval_required = $3, updated_at = $4, updated_by = $5`,
      [
        JSON.stringify(record.allowedHosts),
        JSON.stringify(record.deniedHosts),
        record.approvalRequired,
        record.updatedAt,
        record.updatedBy ?? null,
      ],
    );
    return record;
  }

  /** Read (under an advisory lock per client) and write in one transaction. */
  private write(
    clientId: string,
    next: (existing: CimdClientRecord | undefined, now: number) => CimdClientRecord,
  ): Promise<CimdClientRecord> {
    const table = `${this.q}.cimd_clients`;
    return inTransaction(this.pool, `mcp-auth-kit:cimd-client:${clientId}`, async (client) => {
      const { rows } = await client.query<CimdClientRow>(`SELECT ${CIMD_CLIENT_COLUMNS} FROM ${table} WHERE client_id = $1 FOR UPDATE`, [
        clientId,
      ]);
      const record = next(rows[0] && cimdClientFromRow(rows[0]), epochSeconds(this.clock()));
      await client.query(
        `INSERT INTO ${table} (${CIMD_CLIENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (client_id) DO UPDATE SET host = $2, status = $3, first_seen = $4, last_seen = $5, decided_at = $6, decided_by = $7`,
        cimdClientValues(record),
      );
      return record;
    });
  }

  see(clientId: string, host: string, status: CimdClientStatus) {
    return this.write(clientId, (existing, now) => seenClient(existing, clientId, host, status, now));
  }

  async get(clientId: string) {
    const { rows } = await repeatable<CimdClientRow>(
      this.pool,
      `SELECT ${CIMD_CLIENT_COLUMNS} FROM ${this.q}.cimd_clients WHERE client_id = $1`,
      [clientId],
    );
    return rows[0] ? cimdClientFromRow(rows[0]) : undefined;
  }

  async list(status?: CimdClientStatus) {
    if (status !== undefined) checkCimdStatus(status);
    const { rows } = await repeatable<CimdClientRow>(
      this.pool,
      `SELECT ${CIMD_CLIENT_COLUMNS} FROM ${this.q}.cimd_clients ${status ? 'WHERE status = $1' : ''} ORDER BY first_seen DESC, client_id COLLATE "C"`,
      status ? [status] : [],
    );
    return rows.map(cimdClientFromRow);
  }

  decide(clientId: string, host: string, status: CimdClientStatus, by: string) {
    return this.write(clientId, (existing, now) => decidedClient(existing, clientId, host, status, by, now));
  }

  async delete(clientId: string) {
    const result = await repeatable(this.pool, `DELETE FROM ${this.q}.cimd_clients WHERE client_id = $1`, [clientId]);
    return (result.rowCount ?? 0) > 0;
  }
}
