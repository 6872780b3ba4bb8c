/** Grants across accounts for the console: by account, client or resource, over the account grant index. */
import { listAccountGrants, revokeRememberedGrant } from '../interactions/remembered-grants.js';
import type { Store } from '../storage/types.js';
import type { AdminContext } from './context.js';
import type { AdminService, GrantQuery, GrantView } from './types.js';

export async function listGrantViews(store: Store, query: GrantQuery): Promise<GrantView[]> {
  const accounts = query.accountId
    ? [await store.accounts.findById(query.accountId)].filter((a) => a !== undefined)
    : await store.accounts.list();
  const out: GrantView[] = [];
  for (const account of accounts) {
    for (const g of await listAccountGrants(store, account.id)) {
      if (query.clientId !== undefined && g.clientId !== query.clientId) continue;
      if (query.resource !== undefined && !(query.resource in g.resources)) continue;
      out.push({
        grantId: g.grantId,
        accountId: account.id,
        username: account.username,
        clientId: g.clientId,
        resources: g.resources,
        ...(g.expiresAt !== undefined && { expiresAt: g.expiresAt }),
      });
    }
  }
  return out;
}

/** Revokes every grant any account holds for the client (disabled, denied or deleted client); their account ids. */
export async function revokeClientGrants(store: Store, clientId: string): Promise<string[]> {
  const revoked: string[] = [];
  for (const g of await listGrantViews(store, { clientId })) {
    if (await revokeRememberedGrant(store, g.accountId, clientId)) revoked.push(g.accountId);
  }
  return revoked;
}

export function grantOperations({ store, record }: AdminContext): Pick<AdminService, 'listGrants' | 'revokeGrant'> {
  return {
    listGrants: (query) => listGrantViews(store, query),
    async revokeGrant(actor, accountId, clientId) {
      if (!(await revokeRememberedGrant(store, accountId, clientId))) return false;
      await record(actor, 'grant.revoked', { account_id: accountId, client_id: clientId });
      return true;
    },
  };
}
