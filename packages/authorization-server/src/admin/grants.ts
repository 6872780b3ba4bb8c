/** Grants across accounts for the console: by account, client or resource, over the account grant index. */
import { listAccountGrants } from '../interactions/remembered-grants.js';
import type { Store } from '../storage/types.js';
import type { GrantQuery, GrantView } from './types.js';

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
