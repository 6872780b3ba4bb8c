/** Server-rendered login and consent pages (every value escaped). */
import { escapeHtml, page } from '../html.js';

export interface LoginView {
  serviceName: string;
  action: string;
  csrf: string;
  clientName: string;
  username?: string;
  error?: string;
}

export function loginPage(v: LoginView): string {
  return page(
    `Sign in — ${v.serviceName}`,
    `<h1>Sign in to ${escapeHtml(v.serviceName)}</h1>
<p><strong>${escapeHtml(v.clientName)}</strong> wants to access your account.</p>
${v.error ? `<p class="error" role="alert">${escapeHtml(v.error)}</p>` : ''}
<form method="post" action="${escapeHtml(v.action)}" autocomplete="on">
<input type="hidden" name="csrf" value="${escapeHtml(v.csrf)}">
<label for="username">Username</label><input id="username" type="text" name="username" required autofocus autocomplete="username" value="${escapeHtml(v.username ?? '')}">
<label for="password">Password</label><input id="password" type="password" name="password" required autocomplete="current-password">
<button type="submit" name="action" value="login">Sign in</button>
<button type="submit" name="action" value="abort" formnovalidate>Cancel</button>
</form>`,
  );
}

export interface ConsentScope {
  scope: string;
  description: string;
}

export interface ConsentView {
  serviceName: string;
  action: string;
  csrf: string;
  clientName: string;
  /** True for clients the operator did not register (CIMD, DCR): their name is self-asserted. */
  unverified: boolean;
  clientId: string;
  /** Host serving the CIMD document, when the client_id is a URL. */
  cimdHost?: string;
  redirectHost: string;
  loopbackOnly: boolean;
  account: string;
  resources: Array<{ resource: string; scopes: ConsentScope[] }>;
  oidcScopes: string[];
}

export function consentPage(v: ConsentView): string {
  const resources = v.resources
    .map(
      (r) => `<dt>Resource</dt><dd><code>${escapeHtml(r.resource)}</code></dd>
<dt>Permissions</dt><dd><ul>${
        r.scopes.length
          ? r.scopes.map((s) => `<li><code>${escapeHtml(s.scope)}</code> — ${escapeHtml(s.description)}</li>`).join('')
          : '<li>Basic access</li>'
      }</ul></dd>`,
    )
    .join('');
  const oidc = v.oidcScopes.length
    ? `<dt>Account information</dt><dd>${v.oidcScopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(', ')}</dd>`
    : '';
  return page(
    `Authorize ${v.clientName} — ${v.serviceName}`,
    `<h1>Authorize access</h1>
<p><strong>${escapeHtml(v.clientName)}</strong>${
      v.unverified ? ' <em>(unverified: this name was supplied by the application itself)</em>' : ''
    } wants to access <strong>${escapeHtml(v.serviceName)}</strong> as <strong>${escapeHtml(v.account)}</strong>.</p>
${
  v.loopbackOnly
    ? '<p class="warn" role="alert">This application only redirects to your own computer (localhost). Approve only if you just started it yourself.</p>'
    : ''
}
<dl>
<dt>Client ID</dt><dd><code>${escapeHtml(v.clientId)}</code></dd>
${v.cimdHost ? `<dt>Metadata published by</dt><dd><code>${escapeHtml(v.cimdHost)}</code></dd>` : ''}
<dt>You will be sent back to</dt><dd><code>${escapeHtml(v.redirectHost)}</code></dd>
${resources}${oidc}
</dl>
<form method="post" action="${escapeHtml(v.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(v.csrf)}">
<button type="submit" name="action" value="approve">Approve</button>
<button type="submit" name="action" value="deny">Deny</button>
</form>`,
  );
}

export function errorPage(message: string): string {
  return page('Error', `<h1>Something went wrong</h1><p class="error">${escapeHtml(message)}</p><p>Return to the application and try again.</p>`);
}
