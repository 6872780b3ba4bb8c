/**
 * The provider's HTML pages: sign-in, consent and error. Plain forms, no script and no style;
 * every value from outside (client name, scopes, usernames, redirect host) goes through
 * `escapeHtml`. The form names are the ones the headless connect driver submits.
 */
import { escapeHtml } from '@mcp-auth-kit/protocol';
import { CSRF_FIELD, TRANSACTION_FIELD, type Transaction } from './provider-sessions.js';

/** The button every form posts with, and its values. */
export const PROVIDER_FORM = { button: 'action', signIn: 'signin', approve: 'approve', deny: 'deny' } as const;

/** Where the forms post. */
export const FORM_PATH = '/authorize/form';

/**
 * The pages' Content-Security-Policy: no script, no style, no framing. A form may post to the
 * provider only, and the consent form also to the client's origin: browsers apply form-action
 * to the redirect that answers the post.
 */
export function pageCsp(formTarget?: string): string {
  return `default-src 'none'; base-uri 'none'; form-action 'self'${formTarget ? ` ${formTarget}` : ''}; frame-ancestors 'none'`;
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title></head><body><main>${body}</main></body></html>`;
}

function hiddenFields(transaction: Transaction): string {
  return `<input type="hidden" name="${TRANSACTION_FIELD}" value="${escapeHtml(transaction.id)}">
<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(transaction.csrf)}">`;
}

function clientName(transaction: Transaction): string {
  return transaction.request.client.name ?? transaction.request.client.clientId;
}

export function signInPage(service: string, transaction: Transaction, error?: string, username?: string): string {
  return page(
    `Sign in — ${service}`,
    `<h1>Sign in to ${escapeHtml(service)}</h1>
<p><strong>${escapeHtml(clientName(transaction))}</strong> asks for access to your ${escapeHtml(service)} account.</p>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${FORM_PATH}">
${hiddenFields(transaction)}
<label for="username">Username</label> <input id="username" type="text" name="username" required autocomplete="username" value="${escapeHtml(username ?? '')}">
<label for="password">Password</label> <input id="password" type="password" name="password" required autocomplete="current-password">
<button type="submit" name="${PROVIDER_FORM.button}" value="${PROVIDER_FORM.signIn}">Sign in</button>
</form>`,
  );
}

export function consentPage(service: string, transaction: Transaction, username: string): string {
  const { request } = transaction;
  return page(
    `Allow access — ${service}`,
    `<h1>Allow ${escapeHtml(clientName(transaction))} to use your ${escapeHtml(service)} account?</h1>
<p>Signed in as <strong>${escapeHtml(username)}</strong>.</p>
<p>It asks for:</p>
<ul>${request.scopes.map((scope) => `<li><code>${escapeHtml(scope)}</code></li>`).join('')}</ul>
<p>You will be sent back to <strong>${escapeHtml(new URL(request.redirectUri).host)}</strong>.</p>
<form method="post" action="${FORM_PATH}">
${hiddenFields(transaction)}
<button type="submit" name="${PROVIDER_FORM.button}" value="${PROVIDER_FORM.approve}">Allow</button>
<button type="submit" name="${PROVIDER_FORM.button}" value="${PROVIDER_FORM.deny}">Deny</button>
</form>`,
  );
}

export function errorPage(service: string, message: string): string {
  return page(`Error — ${service}`, `<h1>${escapeHtml(service)} cannot continue</h1>\n<p>${escapeHtml(message)}</p>`);
}
