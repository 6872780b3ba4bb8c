/** The admin service's CIMD operations: the trust policy and the approval queue's decisions. */
import { cimdHostOf } from '../clients/cimd-trust-gate.js';
import { StorageError } from '../storage/errors.js';
import type { CimdTrustPolicy } from '../storage/types.js';
import type { AdminContext } from './context.js';
import { revokeClientGrants } from './grants.js';
import { type AdminService, AdminServiceError } from './types.js';

/** The document host of a CIMD client_id URL, or a refusal (the queue only holds https URLs). */
function cimdHost(clientId: string): string {
  const host = cimdHostOf(clientId);
  if (!host) throw new AdminServiceError('a CIMD client id is an https URL', 'invalid_request');
  return host;
}

type CimdOperations = Pick<AdminService, 'cimdPolicy' | 'setCimdPolicy' | 'listCimdClients' | 'decideCimdClient'>;

export function cimdOperations({ store, record }: AdminContext): CimdOperations {
  return {
    cimdPolicy: () => store.cimdTrust.policy(),
    async setCimdPolicy(actor, policy) {
      let saved: CimdTrustPolicy;
      try {
        saved = await store.cimdTrust.setPolicy({ ...policy, updatedBy: actor.sub });
      } catch (error) {
        if (error instanceof StorageError && error.code === 'invalid_input') throw new AdminServiceError(error.message, 'invalid_request');
        throw error;
      }
      await record(actor, 'cimd.policy_changed', {
        allowed_hosts: saved.allowedHosts,
        denied_hosts: saved.deniedHosts,
        approval_required: saved.approvalRequired,
      });
      return saved;
    },
    listCimdClients: (status) => store.cimdTrust.list(status),
    async decideCimdClient(actor, clientId, decision) {
      if (decision !== 'approved' && decision !== 'denied')
        throw new AdminServiceError('decision is approved or denied', 'invalid_request');
      const decided = await store.cimdTrust.decide(clientId, cimdHost(clientId), decision, actor.sub);
      const revoked = decision === 'denied' ? await revokeClientGrants(store, clientId) : [];
      await record(actor, decision === 'approved' ? 'cimd.client_approved' : 'cimd.client_denied', {
        client_id: clientId,
        host: decided.host,
        revoked_grants: revoked.length,
      });
      return decided;
    },
  };
}
