/**
 * Console › Users: list and search, create, and one user's page (linked identities, grants,
 * third-party connections; disable / enable). Disabling ends the user's access everywhere (the
 * admin service revokes the grants, which reaches introspection and the revocation signal).
 * A password hash is never part of the view: only whether one is set.
 */
import type { Router } from 'express';
import type { UserView } from '../../admin/types.js';
import { escapeHtml } from '../../http/html.js';
import { actor, type ConsoleOptions, done, field, locals, send } from '../context.js';
import { badge, filterForm, notice, orDash, postButton, table, when } from '../layout.js';
import { grantsTable } from './grants-table.js';

const NOTICES: Record<string, string> = {
  created: 'User created.',
  disabled: 'User disabled: their grants are revoked and their tokens no longer work.',
  enabled: 'User enabled.',
  revoked: 'Grant revoked.',
};

const userPath = (base: string, id: string) => `${base}/users/${encodeURIComponent(id)}`;

function statusBadges(u: UserView): string {
  return [u.disabled ? badge('Disabled', 'bad') : badge('Active', 'ok'), u.admin ? badge('Operator') : ''].join(' ');
}

function createForm(f: ReturnType<typeof locals>['frame']): string {
  return `<h2 id="create">Create a user</h2>
<form class="card filters" method="post" action="${escapeHtml(`${f.base}/users/create`)}">
<input type="hidden" name="csrf" value="${escapeHtml(f.csrf)}">
<div><label for="new-username">Username</label><input id="new-username" type="text" name="username" required autocomplete="off" autocapitalize="none" spellcheck="false"></div>
<div><label for="new-name">Display name</label><input id="new-name" type="text" name="display_name" autocomplete="off"></div>
<div><label for="new-password">Password</label><input id="new-password" type="password" name="password" required autocomplete="new-password" minlength="8"></div>
<div><button type="submit" class="primary">Create user</button></div>
</form>`;
}

export function mountUsers(router: Router, o: ConsoleOptions): void {
  router.get('/users', async (req, res) => {
    const f = locals(res).frame;
    const q = field(req.query, 'q', 200);
    const users = await o.admin.listUsers(q || undefined);
    const rows = users.map((u) => [
      `<a href="${escapeHtml(userPath(f.base, u.id))}">${escapeHtml(u.username)}</a>${u.displayName ? `<br><span class="muted">${escapeHtml(u.displayName)}</span>` : ''}`,
      statusBadges(u),
      escapeHtml(u.source),
      u.linkedIdentities.length ? String(u.linkedIdentities.length) : '—',
      escapeHtml(when(u.createdAt)),
    ]);
    send(
      res,
      '/users',
      'Users',
      `<h1>Users</h1>${notice(NOTICES[field(req.query, 'done')])}
${filterForm(f, '/users', [`<div><label for="q">Search by username or name</label><input id="q" type="search" name="q" value="${escapeHtml(q)}"></div>`], 'Search')}
${table('Users', ['User', 'Status', 'Source', 'Linked identities', 'Created'], rows, q ? 'No user matches.' : 'No user yet.')}
${createForm(f)}`,
    );
  });

  router.post('/users/create', async (req, res) => {
    const user = await o.admin.createUser(actor(res), {
      username: field(req.body, 'username', 200),
      displayName: field(req.body, 'display_name', 200) || undefined,
      password: typeof req.body?.password === 'string' ? req.body.password : undefined,
    });
    done(res, `/users/${encodeURIComponent(user.id)}`, 'created');
  });

  router.get('/users/:id', async (req, res) => {
    const f = locals(res).frame;
    const user = await o.admin.getUser(String(req.params.id));
    if (!user) return send(res, '/users', 'Not found', '<h1>Not found</h1><p class="error" role="alert">No such user.</p>', 404);
    const [grants, connections] = await Promise.all([o.admin.listGrants({ accountId: user.id }), o.admin.userConnections(user.id)]);
    const back = `/users/${encodeURIComponent(user.id)}`;
    const toggle = user.disabled
      ? postButton(f, '/users/enable', 'Enable', { account_id: user.id }, '', user.username)
      : postButton(f, '/users/disable', 'Disable', { account_id: user.id }, 'danger', user.username);
    const identities = user.linkedIdentities.length
      ? `<ul class="plain">${user.linkedIdentities.map((i) => `<li><code>${escapeHtml(i)}</code></li>`).join('')}</ul>`
      : '<p class="muted">None: this user signs in with a password only.</p>';
    const connectionRows = connections.map((c) => [
      escapeHtml(c.provider),
      escapeHtml(c.scopes.join(' ') || 'Basic access'),
      escapeHtml(when(c.createdAt)),
      escapeHtml(when(c.expiresAt)),
    ]);
    send(
      res,
      '/users',
      user.username,
      `<h1>${escapeHtml(user.username)} ${statusBadges(user)}</h1>${notice(NOTICES[field(req.query, 'done')])}
<div class="card"><dl>
<dt>Display name</dt><dd>${orDash(user.displayName)}</dd>
<dt>Subject (<code>sub</code>)</dt><dd><code>${escapeHtml(user.id)}</code></dd>
<dt>Source</dt><dd>${escapeHtml(user.source)}; ${user.hasPassword ? 'has a password' : 'no password'}</dd>
<dt>Created</dt><dd>${escapeHtml(when(user.createdAt))}</dd>
</dl>${toggle}</div>
<h2>Linked identities</h2><div class="card">${identities}</div>
<h2>Grants</h2>${await grantsTable(o.admin, f, grants, back)}
<h2>Third-party connections</h2>${table('Third-party connections', ['Service', 'Access', 'Connected', 'Token expires'], connectionRows, 'No connection.')}`,
    );
  });

  for (const action of ['disable', 'enable'] as const) {
    router.post(`/users/${action}`, async (req, res) => {
      const accountId = field(req.body, 'account_id', 200);
      await o.admin.setUserDisabled(actor(res), accountId, action === 'disable');
      done(res, `/users/${encodeURIComponent(accountId)}`, `${action}d`);
    });
  }
}
