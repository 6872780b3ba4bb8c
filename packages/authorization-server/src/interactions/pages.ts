/**
 * Server-rendered login, consent and error pages (every value escaped, no inline script or
 * style: the stylesheet is an external file, see router.ts).
 */
import { escapeHtml, page } from '../html.js';

export interface LoginView {
  serviceName: string;
  action: string;
  csrf: string;
  clientName: string;
  /** The client's name is self-asserted (CIMD, DCR). */
  unverified?: boolean;
  stylesheet: string;
  username?: string;
  error?: string;
  /** "Sign in with <name>" buttons, in configuration order. */
  upstream?: string[];
}

export function loginPage(v: LoginView): string {
  const invalid = v.error ? ' aria-invalid="true" aria-describedby="login-error"' : '';
  const upstream = v.upstream?.length
    ? `<p class="divider">or</p>
<form method="post" action="${escapeHtml(v.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(v.csrf)}">
${v.upstream.map((name, i) => `<button type="submit" class="upstream" name="upstream" value="${i}">Sign in with ${escapeHtml(name)}</button>`).join('\n')}
</form>`
    : '';
  return page(
    `Sign in — ${v.serviceName}`,
    `<h1>Sign in to ${escapeHtml(v.serviceName)}</h1>
<p><strong>${escapeHtml(v.clientName)}</strong>${v.unverified ? ' <em class="badge">unverified</em>' : ''} wants to access your account.</p>
${v.error ? `<p id="login-error" class="error" role="alert">${escapeHtml(v.error)}</p>` : ''}
<form method="post" action="${escapeHtml(v.action)}" autocomplete="on">
<input type="hidden" name="csrf" value="${escapeHtml(v.csrf)}">
<label for="username">Username</label><input id="username" type="text" name="username" required autofocus autocomplete="username" autocapitalize="none" spellcheck="false" value="${escapeHtml(v.username ?? '')}"${invalid}>
<label for="password">Password</label><input id="password" type="password" name="password" required autocomplete="current-password"${invalid}>
<div class="actions"><button type="submit" class="primary" name="action" value="login">Sign in</button>
<button type="submit" name="action" value="abort" formnovalidate>Cancel</button></div>
</form>
${upstream}`,
    v.stylesheet,
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
  stylesheet: string;
  clientName: string;
  /** True for clients the operator did not register (CIMD, DCR): their name is self-asserted. */
  unverified: boolean;
  clientId: string;
  /** Host serving the CIMD document, when the client_id is a URL. */
  cimdHost?: string;
  redirectHost: string;
  /** The full redirect URI of this request (where the code is sent). */
  redirectUri: string;
  loopbackOnly: boolean;
  account: string;
  resources: Array<{ resource: string; scopes: ConsentScope[]; alreadyGranted: string[] }>;
  /** Nothing new is asked (the access was approved before): the user confirms it again. */
  reconfirm?: boolean;
  oidcScopes: string[];
}

export function consentPage(v: ConsentView): string {
  const resources = v.resources
    .map(
      (r) => `<dt>Resource</dt><dd><code>${escapeHtml(r.resource)}</code></dd>
<dt>${r.alreadyGranted.length ? 'New permissions' : 'Permissions'}</dt><dd><ul>${
        r.scopes.length
          ? r.scopes
              .map((s) => `<li>${escapeHtml(s.description)} <span class="muted">(<code>${escapeHtml(s.scope)}</code>)</span></li>`)
              .join('')
          : '<li>Basic access</li>'
      }</ul></dd>${
        r.alreadyGranted.length
          ? `<dt>Already allowed</dt><dd class="muted">${r.alreadyGranted.map((s) => `<code>${escapeHtml(s)}</code>`).join(' ')}</dd>`
          : ''
      }`,
    )
    .join('');
  const oidc = v.oidcScopes.length
    ? `<dt>Account information</dt><dd>${v.oidcScopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(', ')}</dd>`
    : '';
  const unverified = v.unverified
    ? ` <em class="badge">unverified</em> <span class="muted">(this name was supplied by the application itself)</span>`
    : '';
  return page(
    `Authorize ${v.clientName} — ${v.serviceName}`,
    `<h1>Authorize access</h1>
<p><strong>${escapeHtml(v.clientName)}</strong>${unverified} wants to access <strong>${escapeHtml(v.serviceName)}</strong> as <strong>${escapeHtml(v.account)}</strong>.</p>
${
  v.loopbackOnly
    ? '<p class="warn" role="alert"><strong>Local application.</strong> This application only redirects to your own computer (localhost). Any program on this computer could have made this request: approve only if you just started it yourself.</p>'
    : ''
}
<h2>Application</h2>
<dl>
<dt>Client ID</dt><dd><code>${escapeHtml(v.clientId)}</code></dd>
${v.cimdHost ? `<dt>Metadata published by</dt><dd><code>${escapeHtml(v.cimdHost)}</code></dd>` : ''}
<dt>You will be sent back to</dt><dd><strong><code>${escapeHtml(v.redirectHost)}</code></strong><br><span class="muted">${escapeHtml(v.redirectUri)}</span></dd>
</dl>
<h2>Requested access</h2>
${v.reconfirm ? '<p>You allowed this access before. Confirm that this is the application you are using now.</p>' : ''}
<dl>
${resources}${oidc}
</dl>
<form method="post" action="${escapeHtml(v.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(v.csrf)}">
<div class="actions"><button type="submit" class="primary" name="action" value="approve">Approve</button>
<button type="submit" name="action" value="deny">Deny</button></div>
</form>`,
    v.stylesheet,
  );
}

export function errorPage(message: string, stylesheet?: string, retryUrl?: string): string {
  return page(
    'Error',
    `<h1>Something went wrong</h1><p class="error" role="alert">${escapeHtml(message)}</p>${
      retryUrl ? `<p><a href="${escapeHtml(retryUrl)}">Back to sign-in</a></p>` : '<p>Return to the application and try again.</p>'
    }`,
    stylesheet,
  );
}
