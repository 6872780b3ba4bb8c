/**
 * The account page's "Connected accounts": each third-party connection of the signed-in user
 * (provider, granted scopes, since when; never a token), with a CSRF-protected disconnect form.
 */
import { escapeHtml } from '../http/html.js';
import { scopeItem } from '../interactions/consent-page.js';
import type { ThirdParty } from './service.js';

const day = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().slice(0, 10);

export async function connectionsSection(thirdParty: ThirdParty, accountId: string, action: string, csrf: string): Promise<string> {
  const connections = await thirdParty.vault.list(accountId);
  const items = connections.map((c) => {
    const name = thirdParty.providers.get(c.provider)?.displayName ?? c.provider;
    const scopes = c.scopes.length
      ? `<ul>${c.scopes.map((scope) => scopeItem({ scope })).join('')}</ul>`
      : '<ul><li>Basic access</li></ul>';
    return `<li><h3>${escapeHtml(name)}</h3>
<dl><dt>Connected</dt><dd>${escapeHtml(day(c.createdAt))}</dd><dt>Access</dt><dd>${scopes}</dd></dl>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<input type="hidden" name="provider" value="${escapeHtml(c.provider)}">
<button type="submit" name="action" value="disconnect">Disconnect ${escapeHtml(name)}</button>
</form></li>`;
  });
  return `<h2>Connected accounts</h2>
${items.length ? `<ul class="grants">${items.join('\n')}</ul>` : '<p>No account of another service is connected.</p>'}
<p class="muted">Disconnecting deletes the access kept here (and revokes it at the service when it can); applications will ask you to connect again.</p>`;
}
