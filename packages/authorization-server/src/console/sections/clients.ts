/**
 * Console › Clients: every client with where it came from (a CIMD document and its host, DCR
 * and when, the configuration), redirect URIs, grant types and last use; disable / enable /
 * delete. Names and URIs come from the clients themselves (CIMD documents, DCR requests): shown
 * escaped and marked as self-asserted; a client secret is never part of the view.
 */
import type { Router } from 'express';
import type { ClientView } from '../../admin/types.js';
import { escapeHtml } from '../../http/html.js';
import { actor, type ConsoleOptions, done, field, locals, send } from '../context.js';
import { badge, notice, postButton, table, when } from '../layout.js';

const NOTICES: Record<string, string> = { disabled: 'Client disabled.', enabled: 'Client enabled.', deleted: 'Client deleted.' };

export function originCell(c: ClientView): string {
  if (c.origin === 'cimd') return `${badge('CIMD')} <code>${escapeHtml(c.host ?? '')}</code>`;
  if (c.origin === 'dcr') return `${badge('DCR')}<br><span class="muted">registered ${escapeHtml(when(c.createdAt))}</span>`;
  return badge('Configured', 'ok');
}

export function clientName(c: ClientView): string {
  const name = c.clientName ? escapeHtml(c.clientName) : '<span class="muted">(no name)</span>';
  return c.origin === 'configured' ? `<strong>${name}</strong>` : `<strong>${name}</strong> <span class="muted">(self-asserted)</span>`;
}

function statusCell(c: ClientView): string {
  if (c.disabled) return badge('Disabled', 'bad');
  if (c.approval === 'pending') return badge('Waiting for approval', 'warn');
  if (c.approval === 'denied') return badge('Denied', 'bad');
  return badge('Active', 'ok');
}

const list = (items: string[]) =>
  items.length ? `<ul class="plain">${items.map((i) => `<li><code>${escapeHtml(i)}</code></li>`).join('')}</ul>` : '—';

export function mountClients(router: Router, o: ConsoleOptions): void {
  router.get('/clients', async (req, res) => {
    const f = locals(res).frame;
    const clients = await o.admin.listClients();
    const rows = clients.map((c) => {
      const label = c.clientName ?? c.clientId;
      const actions = [
        c.disabled
          ? postButton(f, '/clients/enable', 'Enable', { client_id: c.clientId }, '', label)
          : postButton(f, '/clients/disable', 'Disable', { client_id: c.clientId }, '', label),
        c.origin === 'configured' ? '' : postButton(f, '/clients/delete', 'Delete', { client_id: c.clientId }, 'danger', label),
      ].join('');
      return [
        `${clientName(c)}<br><code>${escapeHtml(c.clientId)}</code>`,
        originCell(c),
        list(c.redirectUris),
        escapeHtml(c.grantTypes.join(', ')),
        escapeHtml(c.lastUsedAt ? when(Math.floor(c.lastUsedAt / 1000)) : 'never'),
        statusCell(c),
        actions,
      ];
    });
    send(
      res,
      '/clients',
      'Clients',
      `<h1>Clients</h1>${notice(NOTICES[field(req.query, 'done')])}
${table('Clients', ['Client', 'Origin', 'Redirect URIs', 'Grant types', 'Last use', 'Status', 'Actions'], rows, 'No client has registered yet.')}
<p class="muted">Disabling a client refuses it at the authorization and token endpoints and revokes its grants. Deleting a CIMD client forgets it: if it comes back it is treated as new under the client document policy.</p>`,
    );
  });

  for (const [action, noticeKey] of [
    ['disable', 'disabled'],
    ['enable', 'enabled'],
    ['delete', 'deleted'],
  ] as const) {
    router.post(`/clients/${action}`, async (req, res) => {
      const clientId = field(req.body, 'client_id', 2000);
      if (action === 'delete') await o.admin.deleteClient(actor(res), clientId);
      else await o.admin.setClientDisabled(actor(res), clientId, action === 'disable');
      done(res, '/clients', noticeKey);
    });
  }
}
