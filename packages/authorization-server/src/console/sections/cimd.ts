/**
 * Console › Client documents: the CIMD trust policy (allowed and denied hosts, the approval
 * step) and the approval queue: clients whose metadata document is on a host that is not yet
 * allowed wait here until an operator approves or denies them. What a document says (name,
 * redirect URIs) is shown escaped, as the client's own claim.
 */
import type { Router } from 'express';
import type { CimdClientRecord, ClientView } from '../../admin/types.js';
import { escapeHtml } from '../../http/html.js';
import { actor, type ConsoleOptions, done, field, locals, send } from '../context.js';
import { badge, notice, postButton, table, when } from '../layout.js';
import { clientName } from './clients.js';

const NOTICES: Record<string, string> = {
  policy: 'Policy saved.',
  approved: 'Client approved: its users can now complete their sign-in.',
  denied: 'Client denied.',
};
const STATUS_TONE = { pending: 'warn', approved: 'ok', denied: 'bad' } as const;

/** One host pattern per line or comma; blank entries dropped. */
export function hostList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
}

function queueRow(f: ReturnType<typeof locals>['frame'], r: CimdClientRecord, client: ClientView | undefined): string[] {
  const label = client?.clientName ?? r.clientId;
  const decide = (decision: 'approved' | 'denied', text: string, kind: '' | 'primary' | 'danger') =>
    postButton(f, '/cimd/decide', text, { client_id: r.clientId, decision }, kind, label);
  const actions =
    r.status === 'pending'
      ? decide('approved', 'Approve', 'primary') + decide('denied', 'Deny', 'danger')
      : r.status === 'approved'
        ? decide('denied', 'Deny', '')
        : decide('approved', 'Approve', '');
  return [
    `${client ? clientName(client) : '<span class="muted">(document not cached)</span>'}<br><code>${escapeHtml(r.clientId)}</code>`,
    `<code>${escapeHtml(r.host)}</code>`,
    client?.redirectUris.length
      ? `<ul class="plain">${client.redirectUris.map((u) => `<li><code>${escapeHtml(u)}</code></li>`).join('')}</ul>`
      : '—',
    `${escapeHtml(when(r.firstSeen))}<br><span class="muted">last ${escapeHtml(when(r.lastSeen))}</span>`,
    `${badge(r.status === 'pending' ? 'Waiting' : r.status === 'approved' ? 'Approved' : 'Denied', STATUS_TONE[r.status])}${r.decidedAt ? `<br><span class="muted">${escapeHtml(when(r.decidedAt))}</span>` : ''}`,
    actions,
  ];
}

export function mountCimd(router: Router, o: ConsoleOptions): void {
  router.get('/cimd', async (req, res) => {
    const f = locals(res).frame;
    const [policy, records] = await Promise.all([o.admin.cimdPolicy(), o.admin.listCimdClients()]);
    const ordered = [...records.filter((r) => r.status === 'pending'), ...records.filter((r) => r.status !== 'pending')];
    const rows = await Promise.all(ordered.map(async (r) => queueRow(f, r, await o.admin.getClient(r.clientId).catch(() => undefined))));
    const pending = records.filter((r) => r.status === 'pending').length;
    send(
      res,
      '/cimd',
      'Client documents',
      `<h1>Client documents (CIMD)</h1>${notice(NOTICES[field(req.query, 'done')])}
<h2 id="queue">Approval queue ${pending ? badge(`${pending} waiting`, 'warn') : ''}</h2>
${table('Clients known by their metadata document', ['Client', 'Host', 'Redirect URIs', 'Seen', 'Status', 'Decision'], rows, 'No client has come by its metadata document yet.')}
<h2 id="policy">Trust policy</h2>
<form class="card" method="post" action="${escapeHtml(`${f.base}/cimd/policy`)}">
<input type="hidden" name="csrf" value="${escapeHtml(f.csrf)}">
<label for="allowed">Allowed hosts <span class="muted">(one per line; <code>*.example.com</code> for subdomains): their clients need no approval</span></label>
<textarea id="allowed" name="allowed" rows="3">${escapeHtml(policy.allowedHosts.join('\n'))}</textarea>
<label for="denied">Denied hosts <span class="muted">(always refused)</span></label>
<textarea id="denied" name="denied" rows="3">${escapeHtml(policy.deniedHosts.join('\n'))}</textarea>
<p><label class="inline"><input type="checkbox" name="approval" value="1"${policy.approvalRequired ? ' checked' : ''}> Clients from other hosts wait for an operator's approval</label></p>
<button type="submit" class="primary">Save policy</button>
${policy.updatedAt ? `<p class="muted">Last changed ${escapeHtml(when(policy.updatedAt))}</p>` : ''}
</form>`,
    );
  });

  router.post('/cimd/policy', async (req, res) => {
    await o.admin.setCimdPolicy(actor(res), {
      allowedHosts: hostList(field(req.body, 'allowed', 4000)),
      deniedHosts: hostList(field(req.body, 'denied', 4000)),
      approvalRequired: field(req.body, 'approval') === '1',
    });
    done(res, '/cimd', 'policy');
  });

  router.post('/cimd/decide', async (req, res) => {
    const decision = field(req.body, 'decision');
    if (decision !== 'approved' && decision !== 'denied') {
      send(res, '/cimd', 'Not done', '<h1>Not done</h1><p class="error" role="alert">Unknown decision.</p>', 400);
      return;
    }
    await o.admin.decideCimdClient(actor(res), field(req.body, 'client_id', 2000), decision);
    done(res, '/cimd', decision);
  });
}
