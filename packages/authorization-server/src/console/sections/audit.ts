/**
 * Console › Audit log: the events the AS keeps in the store, newest first, searchable by user,
 * client, event and time, a page at a time. Fields were redacted before they were stored;
 * they are shown escaped.
 */
import type { Router } from 'express';
import type { AuditQuery, AuditRecord } from '../../admin/types.js';
import { escapeHtml } from '../../http/html.js';
import { type ConsoleOptions, field, fields, locals, send } from '../context.js';
import { badge, filterForm, table } from '../layout.js';

const PAGE = 50;
/** Fields already shown in their own column. */
const SHOWN = new Set(['audit', 'account_id', 'account', 'client_id', 'actor']);

/** `YYYY-MM-DDTHH:MM` (a datetime-local input, read as UTC) → epoch ms; undefined when blank or invalid. */
export function parseUtcMinute(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value)) return undefined;
  const ms = Date.parse(`${value}:00Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

function details(r: AuditRecord): string {
  const entries = Object.entries(r.fields).filter(([k]) => !SHOWN.has(k));
  if (!entries.length) return '';
  return `<ul class="plain muted">${entries
    .slice(0, 8)
    .map(([k, v]) => `<li>${escapeHtml(k)}: <code>${escapeHtml(typeof v === 'string' ? v : JSON.stringify(v))}</code></li>`)
    .join('')}</ul>`;
}

/** Who and what a record names, by name where the console knows it (ids stay the search keys). */
interface Names {
  users: Map<string, string>;
  clients: Map<string, string>;
}

function row(base: string, r: AuditRecord, names: Names): string[] {
  const link = (key: string, value: string | undefined, name: string | undefined) =>
    value
      ? `<a href="${escapeHtml(`${base}/audit?${new URLSearchParams({ [key]: value })}`)}">${name ? escapeHtml(name) : `<code>${escapeHtml(value)}</code>`}</a>`
      : '—';
  return [
    escapeHtml(`${new Date(r.at).toISOString().slice(0, 19).replace('T', ' ')} UTC`),
    badge(r.event),
    link('actor', r.actor, r.actor ? names.users.get(r.actor) : undefined),
    link('user', r.accountId, r.accountId ? names.users.get(r.accountId) : undefined),
    link('client', r.clientId, r.clientId ? names.clients.get(r.clientId) : undefined),
    details(r),
  ];
}

export function mountAudit(router: Router, o: ConsoleOptions): void {
  router.get('/audit', async (req, res) => {
    const f = locals(res).frame;
    const q = fields(req.query, { user: 200, client: 2000, event: 100, actor: 200, from: 16, to: 16 });
    const before = field(req.query, 'before', 40);
    // A user may be searched by username or by account id (`sub`).
    const user = q.user ? await o.admin.getUser(q.user) : undefined;
    const query: AuditQuery = {
      accountId: q.user ? (user?.id ?? q.user) : undefined,
      clientId: q.client || undefined,
      event: q.event || undefined,
      actor: q.actor || undefined,
      from: parseUtcMinute(q.from),
      to: parseUtcMinute(q.to),
      before: /^\d+$/.test(before) ? before : undefined,
      limit: PAGE,
    };
    const [records, users, clients] = await Promise.all([o.admin.searchAudit(query), o.admin.listUsers(), o.admin.listClients()]);
    const names: Names = {
      users: new Map(users.map((u) => [u.id, u.username])),
      clients: new Map(clients.flatMap((c) => (c.clientName ? [[c.clientId, c.clientName] as [string, string]] : []))),
    };
    const input = (id: string, name: keyof typeof q, label: string, type = 'search') =>
      `<div><label for="${id}">${escapeHtml(label)}</label><input id="${id}" type="${type}" name="${name}" value="${escapeHtml(q[name])}"></div>`;
    const next =
      records.length === PAGE
        ? `<p><a href="${escapeHtml(`${f.base}/audit?${new URLSearchParams({ ...q, before: records[records.length - 1]!.id })}`)}">Older events</a></p>`
        : '';
    send(
      res,
      '/audit',
      'Audit log',
      `<h1>Audit log</h1>
${filterForm(
  f,
  '/audit',
  [
    `${input('a-user', 'user', 'User (username or sub)')}${input('a-client', 'client', 'Client ID')}${input('a-event', 'event', 'Event (e.g. grant.revoked)')}`,
    `${input('a-actor', 'actor', 'Operator (sub)')}${input('a-from', 'from', 'From (UTC)', 'datetime-local')}${input('a-to', 'to', 'Until (UTC)', 'datetime-local')}`,
  ],
  'Search',
)}
${table(
  'Audit events',
  ['Time', 'Event', 'Operator', 'User', 'Client', 'Details'],
  records.map((r) => row(f.base, r, names)),
  'No event matches.',
)}
${next}`,
    );
  });
}
