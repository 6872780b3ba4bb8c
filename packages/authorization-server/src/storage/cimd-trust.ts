/** CIMD trust rules shared by every backend: the default policy, input checks, row ↔ record mapping. */
import { StorageError } from './errors.js';
import type { CimdClientRecord, CimdClientStatus, CimdTrustPolicy } from './types.js';

export const DEFAULT_CIMD_POLICY: CimdTrustPolicy = { allowedHosts: [], deniedHosts: [], approvalRequired: false };

const STATUSES: ReadonlySet<string> = new Set(['pending', 'approved', 'denied']);
const PATTERN = /^(?:\*\.)?[a-z0-9.:_\-[\]]+$/i;

export function checkCimdStatus(status: unknown): asserts status is CimdClientStatus {
  if (typeof status !== 'string' || !STATUSES.has(status))
    throw new StorageError('cimd status must be pending, approved or denied', 'invalid_input');
}

/** A policy as stored: host patterns are lower-cased host names or `*.` suffixes, nothing else. */
export function checkCimdPolicy(policy: Omit<CimdTrustPolicy, 'updatedAt'>): void {
  const hosts = (list: unknown) => Array.isArray(list) && list.every((h) => typeof h === 'string' && PATTERN.test(h) && h.length <= 253);
  if (!hosts(policy.allowedHosts) || !hosts(policy.deniedHosts)) {
    throw new StorageError('cimd policy hosts must be host names or *.suffix patterns', 'invalid_input');
  }
  if (typeof policy.approvalRequired !== 'boolean')
    throw new StorageError('cimd policy approvalRequired must be a boolean', 'invalid_input');
  if (policy.updatedBy !== undefined && typeof policy.updatedBy !== 'string')
    throw new StorageError('cimd policy updatedBy must be a string', 'invalid_input');
}

export function checkCimdClient(clientId: unknown, host: unknown): void {
  if (typeof clientId !== 'string' || clientId === '' || typeof host !== 'string' || host === '') {
    throw new StorageError('cimd client id and host must be non-empty strings', 'invalid_input');
  }
}

export interface CimdPolicyRow {
  allowed_hosts: string;
  denied_hosts: string;
  approval_required: boolean | number;
  updated_at: number | string;
  updated_by: string | null;
}

export function cimdPolicyFromRow(row: CimdPolicyRow | undefined): CimdTrustPolicy {
  if (!row) return { ...DEFAULT_CIMD_POLICY, allowedHosts: [], deniedHosts: [] };
  return {
    allowedHosts: JSON.parse(row.allowed_hosts) as string[],
    deniedHosts: JSON.parse(row.denied_hosts) as string[],
    approvalRequired: Boolean(row.approval_required),
    updatedAt: Number(row.updated_at),
    ...(row.updated_by !== null && { updatedBy: row.updated_by }),
  };
}

/** The stored policy: hosts lower-cased and without duplicates. */
export function cimdPolicyRecord(policy: Omit<CimdTrustPolicy, 'updatedAt'>, nowSeconds: number): CimdTrustPolicy {
  checkCimdPolicy(policy);
  const norm = (list: string[]) => [...new Set(list.map((h) => h.toLowerCase()))];
  return {
    allowedHosts: norm(policy.allowedHosts),
    deniedHosts: norm(policy.deniedHosts),
    approvalRequired: policy.approvalRequired,
    updatedAt: nowSeconds,
    ...(policy.updatedBy !== undefined && { updatedBy: policy.updatedBy }),
  };
}

export interface CimdClientRow {
  client_id: string;
  host: string;
  status: string;
  first_seen: number | string;
  last_seen: number | string;
  decided_at: number | string | null;
  decided_by: string | null;
}

export function cimdClientFromRow(row: CimdClientRow): CimdClientRecord {
  return {
    clientId: row.client_id,
    host: row.host,
    status: STATUSES.has(row.status) ? (row.status as CimdClientStatus) : 'pending',
    firstSeen: Number(row.first_seen),
    lastSeen: Number(row.last_seen),
    ...(row.decided_at !== null && { decidedAt: Number(row.decided_at) }),
    ...(row.decided_by !== null && { decidedBy: row.decided_by }),
  };
}

export const CIMD_CLIENT_COLUMNS = 'client_id, host, status, first_seen, last_seen, decided_at, decided_by';

export function cimdClientValues(r: CimdClientRecord): unknown[] {
  return [r.clientId, r.host, r.status, r.firstSeen, r.lastSeen, r.decidedAt ?? null, r.decidedBy ?? null];
}

/** The record a sighting leaves: a known client keeps its status and decision, only `lastSeen` moves. */
export function seenClient(
  existing: CimdClientRecord | undefined,
  clientId: string,
  host: string,
  status: CimdClientStatus,
  now: number,
): CimdClientRecord {
  checkCimdClient(clientId, host);
  checkCimdStatus(status);
  if (existing) return { ...existing, lastSeen: now };
  return { clientId, host, status, firstSeen: now, lastSeen: now };
}

/** The record an operator's decision leaves. */
export function decidedClient(
  existing: CimdClientRecord | undefined,
  clientId: string,
  host: string,
  status: CimdClientStatus,
  by: string,
  now: number,
): CimdClientRecord {
  checkCimdClient(clientId, host);
  checkCimdStatus(status);
  if (typeof by !== 'string' || by === '') throw new StorageError('cimd decision needs the operator', 'invalid_input');
  const base = existing ?? { clientId, host, firstSeen: now, lastSeen: now };
  return { ...base, status, decidedAt: now, decidedBy: by };
}
