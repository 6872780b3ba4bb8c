/** Console › Overview: counts that link to their pages, the approval queue's length, the latest events. */
import type { Router } from 'express';
import { escapeHtml } from '../../http/html.js';
import { type ConsoleOptions, locals, send } from '../context.js';
import { badge, table } from '../layout.js';

export function mountOverview(router: Router, o: ConsoleOptions): void {
  router.get('/', async (_req, res) => {
    const f = locals(res).frame;
    const [clients, pending, users, grants, recent] = await Promise.all([
      o.admin.listClients(),
      o.admin.listCimdClients('pending'),
      o.admin.listUsers(),
      o.admin.listGrants({}),
      o.admin.searchAudit({ limit: 8 }),
    ]);
    const stat = (path: string, count: number, label: string) =>
      `<a href="${escapeHtml(f.base + path)}"><strong>${escapeHtml(String(count))}</strong>${escapeHtml(label)}</a>`;
    const userName = new Map(users.map((u) => [u.id, u.username]));
    const clientName = new Map(clients.map((c) => [c.clientId, c.clientName]));
    const named = (id: string | undefined, name: string | undefined) =>
      name ? escapeHtml(name) : id ? `<code>${escapeHtml(id)}</code>` : '—';
    const rows = recent.map((r) => [
      escapeHtml(`${new Date(r.at).toISOString().slice(0, 16).replace('T', ' ')} UTC`),
      badge(r.event),
      named(r.accountId, r.accountId && userName.get(r.accountId)),
      named(r.clientId, r.clientId && clientName.get(r.clientId)),
    ]);
    send(
      res,
      '',
      'Overview',
      `<h1>Overview</h1>
${pending.length ? `<p class="notice" role="status"><a href="${escapeHtml(`${f.base}/cimd#queue`)}">${escapeHtml(`${pending.length} client${pending.length === 1 ? '' : 's'} waiting for approval`)}</a></p>` : ''}
<div class="stats">${stat('/clients', clients.length, 'clients')}${stat('/cimd', pending.length, 'waiting for approval')}${stat('/users', users.length, 'users')}${stat('/grants', grants.length, 'grants')}</div>
<h2>Latest events</h2>
${table('Latest audit events', ['Time', 'Event', 'User', 'Client'], rows, 'No event yet.')}
<p><a href="${escapeHtml(`${f.base}/audit`)}">The whole audit log</a></p>`,
    );
  });
}
