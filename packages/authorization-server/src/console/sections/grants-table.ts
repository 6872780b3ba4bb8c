/** The grants table the Grants page and a user's page share: who, which client, what, until when; revoke. */
import type { GrantView } from '../../admin/types.js';
import { escapeHtml } from '../../html.js';
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
export function grantsTable(f: Pick<ConsoleFrame, 'base' | 'csrf'>, grants: GrantView[], back: string): string {
  const rows = grants.map((g) => [
    `<a href="${escapeHtml(`${f.base}/users/${encodeURIComponent(g.accountId)}`)}">${escapeHtml(g.username)}</a>`,
    `<code>${escapeHtml(g.clientId)}</code>`,
    access(g.resources),
    escapeHtml(when(g.expiresAt)),
    postButton(
      f,
      '/grants/revoke',
      `Revoke ${g.username}'s grant to ${g.clientId}`,
      { account_id: g.accountId, client_id: g.clientId, back },
      'danger',
    ),
  ]);
  return table('Grants', ['User', 'Client', 'Access', 'Expires', 'Actions'], rows, 'No grant matches.');
}
