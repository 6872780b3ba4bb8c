/**
 * Which clients oidc-provider may use at all, decided where every endpoint finds a client
 * (`provider.Client.find`: authorization, token, introspection, revocation, interactions): a
 * client the operator disabled is not found (`invalid_client`), and a CIMD client is found only
 * when the stored trust policy admits it (cimd-trust-gate.ts). A CIMD client whose document was
 * fetched and valid is recorded in the approval queue, whatever the verdict.
 */
import type { Provider } from 'oidc-provider';
import { isClientDisabled } from './admin/client-disabled.js';
import type { CimdTrust } from './cimd-trust-gate.js';
import { isCimdClientId } from './client-policy.js';
import type { Logger } from './logger.js';
import { audit } from './audit.js';
import type { Store } from './storage/types.js';

type FindClient = (id: string, ...rest: unknown[]) => Promise<unknown>;

export interface ClientGate {
  /** The client as oidc-provider builds it, without the gate (the waiting page checks the document first). */
  findUngated(id: string): Promise<unknown>;
}

export function installClientGate(provider: Provider, store: Store, trust: CimdTrust, logger: Logger): ClientGate {
  const Client = provider.Client as unknown as { find: FindClient };
  const findUngated: FindClient = Client.find.bind(Client);
  Client.find = async (id, ...rest) => {
    if (typeof id !== 'string' || (await isClientDisabled(store.kv, id))) return undefined;
    if (!isCimdClientId(id)) return findUngated(id, ...rest);
    const verdict = await trust.verdict(id);
    if (verdict === 'denied') return undefined;
    const client = await findUngated(id, ...rest);
    if (client && (await trust.sighted(id))) {
      audit(logger, verdict === 'pending' ? 'cimd.client_waiting' : 'client.registered', { client_id: id, via: 'cimd' });
    }
    return verdict === 'admitted' ? client : undefined;
  };
  return { findUngated: (id) => findUngated(id) };
}
