/** The grants table the Grants page and a user's page share: who, which client, what, until when; revoke. */
import type { AdminService } from '../../admin/service.js';
import type { GrantView } from '../../admin/types.js';
import { escapeHtml } from '../../http/html.js';
import type { ConsoleFrame } from '../layout.js';
import { postButton, table, when } from '../layout.js';

function access(resources: Record<string, string[]>): string {
  const entries = Object.entries(resources);
  if (!entries.length) return 'Basic access';
  return `<ul class="plain">${entries
    .map(([resource, scopes]) => `<li><code>${escapeHtml(resource)}</code>: ${escapeHtml(scopes.join(' ') || '(no scope)')}</li>`)
    .join('')}</ul>`;
}

/** `back` is where a revoke returns to (the page showing the table). */
export async function grantsTable(
  admin: AdminService,
  f: Pick<ConsoleFrame, 'base' | 'csrf'>,
  grants: GrantView[],
  back: string,
): Promise<string> {
  const names = new Map<string, string | undefined>();
  for (const g of grants)
    if (!names.has(g.clientId)) names.set(g.clientId, (await admin.getClient(g.clientId).catch(() => undefined))?.clientName);
  const rows = grants.map((g) => {
    const name = names.get(g.clientId);
    return [
      `<a href="${escapeHtml(`${f.base}/users/${encodeURIComponent(g.accountId)}`)}">${escapeHtml(g.username)}</a>`,
      `${name ? `<strong>${escapeHtml(name)}</strong><br>` : ''}<code>${escapeHtml(g.clientId)}</code>`,
      access(g.resources),
      escapeHtml(when(g.expiresAt)),
      postButton(
        f,
        '/grants/revoke',
        'Revoke',
        { account_id: g.accountId, client_id: g.clientId, back },
        'danger',
        `${g.username}'s grant to ${name ?? g.clientId}`,
      ),
    ];
  });
  return table('Grants', ['User', 'Client', 'Access', 'Expires', 'Actions'], rows, 'No grant matches.');
}
