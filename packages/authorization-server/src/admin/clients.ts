/**
 * The console's client list: configured clients (the config tree), DCR clients (oidc-provider's
 * `Client` rows) and CIMD clients (the approval queue, with the cached document's name and
 * redirect URIs when the document is still cached). Never a secret: only the listed members.
 */
import { cachedCimdDocument, forgetCimdDocument } from '../clients/cimd.js';
import type { ClientMetadata } from '../config/types.js';
import type { CimdClientRecord, Store } from '../storage/types.js';
import { isClientDisabled, markClientDisabled } from './client-disabled.js';
import type { AdminContext } from './context.js';
import { revokeClientGrants } from './grants.js';
import { type AdminService, AdminServiceError, type ClientView } from './types.js';

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const optional = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The public members of client metadata (configured, registered, or a CIMD document). */
function metadataView(
  meta: Record<string, unknown>,
): Pick<ClientView, 'clientName' | 'redirectUris' | 'grantTypes' | 'tokenEndpointAuthMethod'> {
  const clientName = optional(meta.client_name);
  const method = optional(meta.token_endpoint_auth_method);
  return {
    ...(clientName !== undefined && { clientName }),
    redirectUris: strings(meta.redirect_uris),
    grantTypes: meta.grant_types === undefined ? ['authorization_code'] : strings(meta.grant_types),
    ...(method !== undefined && { tokenEndpointAuthMethod: method }),
  };
}

/** Epoch ms of the last token issued or refreshed for the client, from the audit log. */
async function lastUse(store: Store, clientId: string): Promise<number | undefined> {
  const [issued] = await store.audit.search({ clientId, event: 'token.issued', limit: 1 });
  const [refreshed] = await store.audit.search({ clientId, event: 'token.refreshed', limit: 1 });
  const times = [issued?.at, refreshed?.at].filter((t): t is number => t !== undefined);
  return times.length ? Math.max(...times) : undefined;
}

async function finish(store: Store, view: Omit<ClientView, 'disabled' | 'lastUsedAt'>): Promise<ClientView> {
  const lastUsedAt = await lastUse(store, view.clientId);
  return { ...view, ...(lastUsedAt !== undefined && { lastUsedAt }), disabled: await isClientDisabled(store.kv, view.clientId) };
}

export async function cimdClientView(store: Store, record: CimdClientRecord): Promise<ClientView> {
  const doc = (await cachedCimdDocument(store.kv, record.clientId)) ?? {};
  return finish(store, {
    clientId: record.clientId,
    origin: 'cimd',
    host: record.host,
    approval: record.status,
    createdAt: record.firstSeen,
    ...metadataView(doc),
  });
}

export async function listClientViews(store: Store, configured: readonly ClientMetadata[]): Promise<ClientView[]> {
  const out: ClientView[] = [];
  const configuredIds = new Set(configured.map((c) => c.client_id));
  for (const c of configured) {
    out.push(
      await finish(store, { clientId: c.client_id, origin: 'configured', ...metadataView(c as unknown as Record<string, unknown>) }),
    );
  }
  for (const { id, payload } of await store.listModels('Client')) {
    if (configuredIds.has(id)) continue;
    const issuedAt = typeof payload.client_id_issued_at === 'number' ? payload.client_id_issued_at : undefined;
    out.push(
      await finish(store, {
        clientId: id,
        origin: 'dcr',
        ...(issuedAt !== undefined && { createdAt: issuedAt }),
        ...metadataView(payload),
      }),
    );
  }
  for (const record of await store.cimdTrust.list()) out.push(await cimdClientView(store, record));
  return out;
}

type ClientOperations = Pick<AdminService, 'listClients' | 'getClient' | 'setClientDisabled' | 'deleteClient'>;

export function clientOperations({ store, configured, record }: AdminContext): ClientOperations {
  const getClient = async (clientId: string): Promise<ClientView | undefined> => {
    const cimd = await store.cimdTrust.get(clientId);
    if (cimd) return cimdClientView(store, cimd);
    const isConfigured = configured.some((c) => c.client_id === clientId);
    if (!isConfigured && !(await store.adapter('Client').find(clientId))) return undefined;
    return (await listClientViews(store, configured)).find((c) => c.clientId === clientId);
  };
  const requireClient = async (clientId: string) => {
    const client = await getClient(clientId);
    if (!client) throw new AdminServiceError('no such client', 'not_found');
    return client;
  };
  return {
    listClients: () => listClientViews(store, configured),
    getClient,
    async setClientDisabled(actor, clientId, disabled) {
      await requireClient(clientId);
      await markClientDisabled(store.kv, clientId, disabled, actor.sub);
      const revoked = disabled ? await revokeClientGrants(store, clientId) : [];
      await record(actor, 'client.updated', { client_id: clientId, disabled, revoked_grants: revoked.length });
      return requireClient(clientId);
    },
    async deleteClient(actor, clientId) {
      const client = await requireClient(clientId);
      if (client.origin === 'configured')
        throw new AdminServiceError('a configured client is removed from the configuration, not here', 'invalid_request');
      const revoked = await revokeClientGrants(store, clientId);
      if (client.origin === 'dcr') await store.adapter('Client').destroy(clientId);
      else {
        await store.cimdTrust.delete(clientId);
        await forgetCimdDocument(store.kv, clientId);
      }
      await markClientDisabled(store.kv, clientId, false, actor.sub);
      await record(actor, 'client.deleted', { client_id: clientId, origin: client.origin, revoked_grants: revoked.length });
    },
  };
}
