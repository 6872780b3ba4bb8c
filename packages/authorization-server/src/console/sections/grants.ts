/**
 * Console › Grants: the remembered grants, filtered by user, client or resource; revoke (the
 * admin service's revoke, with the admin tool's reach: the grant, its tokens and codes, the
 * revocation signal).
 */
import type { Router } from 'express';
import { escapeHtml } from '../../http/html.js';
import { actor, type ConsoleOptions, done, field, fields, locals, send } from '../context.js';
import { filterForm, notice } from '../layout.js';
import { grantsTable } from './grants-table.js';

const NOTICES: Record<string, string> = { revoked: 'Grant revoked: its tokens no longer work.' };

/** Where a revoke may return to: a console path of ours only (never an absolute or protocol-relative URL). */
export function backPath(value: string): string {
  return /^\/(grants|users\/[A-Za-z0-9%._~-]+)$/.test(value) ? value : '/grants';
}

export function mountGrants(router: Router, o: ConsoleOptions): void {
  router.get('/grants', async (req, res) => {
    const f = locals(res).frame;
    const filter = fields(req.query, { user: 200, client: 2000, resource: 2000 });
    // A user filter may be a username or an account id.
    const user = filter.user ? await o.admin.getUser(filter.user) : undefined;
    const grants =
      filter.user && !user
        ? []
        : await o.admin.listGrants({ accountId: user?.id, clientId: filter.client || undefined, resource: filter.resource || undefined });
    const resourceOptions = ['', ...o.resources]
      .map((r) => `<option value="${escapeHtml(r)}"${r === filter.resource ? ' selected' : ''}>${escapeHtml(r || 'Any resource')}</option>`)
      .join('');
    send(
      res,
      '/grants',
      'Grants',
      `<h1>Grants</h1>${notice(NOTICES[field(req.query, 'done')])}
${filterForm(
  f,
  '/grants',
  [
    `<div><label for="g-user">User</label><input id="g-user" type="search" name="user" value="${escapeHtml(filter.user)}"></div>`,
    `<div><label for="g-client">Client ID</label><input id="g-client" type="search" name="client" value="${escapeHtml(filter.client)}"></div>`,
    `<div><label for="g-resource">Resource</label><select id="g-resource" name="resource">${resourceOptions}</select></div>`,
  ],
  'Filter',
)}
${await grantsTable(o.admin, f, grants, '/grants')}`,
    );
  });

  router.post('/grants/revoke', async (req, res) => {
    const revoked = await o.admin.revokeGrant(actor(res), field(req.body, 'account_id', 200), field(req.body, 'client_id', 2000));
    if (!revoked) {
      send(res, '/grants', 'Not done', '<h1>Not done</h1><p class="error" role="alert">There was no such grant.</p>', 404);
      return;
    }
    done(res, backPath(field(req.body, 'back', 300)), 'revoked');
  });
}
