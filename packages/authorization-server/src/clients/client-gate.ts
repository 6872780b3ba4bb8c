/**
 * Which clients oidc-provider may use at all, decided where every endpoint finds a client
 * (`provider.Client.find`: authorization, token, introspection, revocation, interactions): a
 * client the operator disabled is not found (`invalid_client`), and a CIMD client is found only
 * when the stored trust policy admits it (cimd-trust-gate.ts). A CIMD client whose document was
 * fetched and valid is recorded in the approval queue, whatever the verdict.
 */
import Provider from 'oidc-provider';
import type { RequestContext } from '../storage/request-context.js';
import { isClientDisabled } from '../admin/client-disabled.js';
import type { CimdTrust } from './cimd-trust-gate.js';
import { isCimdClientId } from './client-policy.js';
import type { Logger } from '../ops/logger.js';
import { audit } from '../ops/audit.js';
import type { Store } from '../storage/types.js';

type FindClient = (id: string, ...rest: unknown[]) => Promise<unknown>;

/** oidc-provider's context of the request being handled (its own AsyncLocalStorage). */
const currentRequest = (): RequestContext | undefined => (Provider as unknown as { ctx?: RequestContext }).ctx;

/**
 * A code or refresh token being redeemed lives in a grant, and disabling a client revokes every
 * grant of it (admin/service.ts) before anything else can use them: these two grants need no
 * second look at the disabled mark, which keeps a refresh at its statement budget and working
 * while the key-value store is down (the grant's own state decides).
 */
function redeemsOwnGrant(ctx: RequestContext | undefined): boolean {
  const grant = ctx?.oidc?.params?.grant_type;
  return ctx?.oidc?.route === 'token' && (grant === 'refresh_token' || grant === 'authorization_code');
}

export interface ClientGate {
  /** The client as oidc-provider builds it, without the gate (the waiting page checks the document first). */
  findUngated(id: string): Promise<unknown>;
}

export function installClientGate(provider: Provider, store: Store, trust: CimdTrust, logger: Logger): ClientGate {
  const Client = provider.Client as unknown as { find: FindClient };
  const findUngated: FindClient = Client.find.bind(Client);
  Client.find = async (id, ...rest) => {
    if (typeof id !== 'string') return undefined;
    if (!redeemsOwnGrant(currentRequest()) && (await isClientDisabled(store.kv, id))) return undefined;
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
