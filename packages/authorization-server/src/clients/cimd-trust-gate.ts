/**
 * The operator's CIMD trust policy kept in the store (issue 44; MCP client registration §CIMD:
 * the AS decides which client_id URLs it trusts). The config tree's `cimd.allowedHosts` /
 * `deniedHosts` (cimd.ts `cimdRefusal`) stay the hard outer rule; inside it:
 * - a host in the stored `deniedHosts`, or a client the operator denied: refused;
 * - a client the operator approved: admitted;
 * - with `approvalRequired` on, a client whose host is not in the stored `allowedHosts` waits
 *   (`pending`) until an operator approves or denies it; with it off, every other client is admitted.
 */
import { urlHost } from '@mcp-auth-kit/protocol';
import type { CimdTrustPolicy, Store } from '../storage/types.js';
import { hostMatches, parseUrl } from '../http/urls.js';

export type CimdVerdict = 'admitted' | 'pending' | 'denied';

/** The document host of a client_id URL (brackets of an IPv6 literal removed), or undefined. */
export function cimdHostOf(clientId: string): string | undefined {
  const url = parseUrl(clientId);
  return url && url.protocol === 'https:' ? urlHost(url) : undefined;
}

export function policyVerdict(policy: CimdTrustPolicy, host: string, decision: 'approved' | 'denied' | 'pending' | undefined): CimdVerdict {
  if (policy.deniedHosts.some((p) => hostMatches(p, host))) return 'denied';
  if (decision === 'denied') return 'denied';
  if (decision === 'approved') return 'admitted';
  if (!policy.approvalRequired || policy.allowedHosts.some((p) => hostMatches(p, host))) return 'admitted';
  return 'pending';
}

/** How often a known client's `lastSeen` is written (a token request must not write every time). */
const SIGHTING_INTERVAL_SECONDS = 60;

/**
 * Bounds of the approval queue: anyone with one host can mint client_id URLs without end, and an
 * operator must still be able to read the queue. Past a bound a new client still waits (its user
 * sees the waiting page) but is not queued until the operator decides on what is there.
 */
export const MAX_PENDING_PER_HOST = 20;
export const MAX_PENDING = 500;

export interface CimdTrust {
  verdict(clientId: string): Promise<CimdVerdict>;
  /** Records a client whose document was fetched and valid (the approval queue); true when it is new. */
  sighted(clientId: string): Promise<boolean>;
}

export function createCimdTrust(store: Store, clock: () => number = Date.now): CimdTrust {
  return {
    async verdict(clientId) {
      const host = cimdHostOf(clientId);
      if (!host || clientId.includes('\u0000')) return 'denied';
      const [policy, record] = await Promise.all([store.cimdTrust.policy(), store.cimdTrust.get(clientId)]);
      return policyVerdict(policy, host, record?.status);
    },
    async sighted(clientId) {
      const host = cimdHostOf(clientId);
      if (!host) return false;
      const record = await store.cimdTrust.get(clientId);
      if (record && record.lastSeen > Math.floor(clock() / 1000) - SIGHTING_INTERVAL_SECONDS) return false;
      if (!record) {
        const pending = await store.cimdTrust.list('pending');
        if (pending.length >= MAX_PENDING || pending.filter((r) => r.host === host).length >= MAX_PENDING_PER_HOST) return false;
      }
      // a sighting never decides: the status stays pending until an operator approves or denies
      await store.cimdTrust.see(clientId, host, 'pending');
      return record === undefined;
    },
  };
}
