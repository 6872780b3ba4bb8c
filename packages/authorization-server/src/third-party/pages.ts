/**
 * The connect pages, in the style and under the CSP of the login and consent pages (every value
 * escaped, no script, the one style sheet): the confirmation, the refusal for another signed-in
 * account, the end, and notices. Nothing a provider sent is shown but its (charset-checked) error code.
 */
import { escapeHtml, page } from '../http/html.js';
import { scopeItem } from '../interactions/consent-page.js';

export interface ConfirmView {
  serviceName: string;
  action: string;
  csrf: string;
  stylesheet: string;
  provider: string;
  /** The MCP server that asked: its display name (if configured) and URL. */
  resourceName?: string;
  resource: string;
  /** The provider scopes asked for (shown as scope tokens: their meaning is the provider's). */
  scopes: string[];
  account: string;
}

const form = (action: string, csrf: string, body: string, cls?: string) =>
  `<form method="post" action="${escapeHtml(action)}"${cls ? ` class="${cls}"` : ''}>
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
${body}
</form>`;

export function confirmPage(v: ConfirmView): string {
  const server = v.resourceName
    ? `<strong>${escapeHtml(v.resourceName)}</strong> <span class="muted">(<code>${escapeHtml(v.resource)}</code>)</span>`
    : `<strong><code>${escapeHtml(v.resource)}</code></strong>`;
  const scopes = v.scopes.length ? `<ul>${v.scopes.map((scope) => scopeItem({ scope })).join('')}</ul>` : '<ul><li>Basic access</li></ul>';
  return page(
    `Connect ${v.provider} — ${v.serviceName}`,
    `<h1>Connect your ${escapeHtml(v.provider)} account</h1>
<p>${server} asks to use your <strong>${escapeHtml(v.provider)}</strong> account for <strong>${escapeHtml(v.account)}</strong> on ${escapeHtml(v.serviceName)}.</p>
<p>You will sign in at ${escapeHtml(v.provider)} next. ${escapeHtml(v.serviceName)} keeps the access it grants, encrypted, and gives it only to this service, while you are signed in to it there.</p>
<h2>Access asked of ${escapeHtml(v.provider)}</h2>
${scopes}
${form(
  v.action,
  v.csrf,
  `<div class="actions"><button type="submit" class="primary" name="action" value="connect">Connect ${escapeHtml(v.provider)}</button>
<button type="submit" name="action" value="cancel">Cancel</button></div>`,
)}
<p class="muted">You can disconnect it at any time on your account page.</p>`,
    v.stylesheet,
  );
}

export interface OtherAccountView {
  serviceName: string;
  action: string;
  csrf: string;
  stylesheet: string;
  provider: string;
  /** Who is signed in now (not the account the link was made for, which is not named). */
  account: string;
}

/** The link is for another account: nothing is linked; the user may sign in as the right one. */
export function otherAccountPage(v: OtherAccountView): string {
  return page(
    `Not your link — ${v.serviceName}`,
    `<h1>This link is for another account</h1>
<p class="error" role="alert">You are signed in to ${escapeHtml(v.serviceName)} as <strong>${escapeHtml(v.account)}</strong>, but this link to connect
a ${escapeHtml(v.provider)} account was made for someone else. Nothing was connected.</p>
<p>If someone sent you this link, do not use it. If it came from your own application, sign in with the account you use there.</p>
${form(v.action, v.csrf, '<div class="actions"><button type="submit" name="action" value="switch">Sign in with another account</button></div>')}`,
    v.stylesheet,
  );
}

export function connectedPage(serviceName: string, provider: string, stylesheet: string): string {
  return page(
    `${provider} connected — ${serviceName}`,
    `<h1>${escapeHtml(provider)} is connected</h1>
<p role="status">Your ${escapeHtml(provider)} account is connected to your account on ${escapeHtml(serviceName)}.</p>
<p>You can close this window and return to your application.</p>`,
    stylesheet,
  );
}

/** Any other end of a connect page: a title, what happened, and what to do. */
export function noticePage(title: string, message: string, stylesheet: string, error = true): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1><p class="${error ? 'error' : 'warn'}" role="${error ? 'alert' : 'status'}">${escapeHtml(message)}</p>
<p>Return to your application; it can start again.</p>`,
    stylesheet,
  );
}
