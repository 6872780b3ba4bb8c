/**
 * Server-rendered login and error pages (every value escaped, no inline script or style: the
 * stylesheet is an external file, see router.ts); the consent page is consent-page.ts.
 */
import { escapeHtml, page } from '../http/html.js';

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
  /** Replaces "<client> wants to access your account" (a sign-in of the AS's own, e.g. from a connect page). */
  intro?: string;
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
${
  v.intro
    ? `<p>${escapeHtml(v.intro)}</p>`
    : `<p><strong>${escapeHtml(v.clientName)}</strong>${v.unverified ? ' <em class="badge">unverified</em>' : ''} wants to access your account.</p>`
}
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

export function errorPage(message: string, stylesheet?: string, retryUrl?: string): string {
  return page(
    'Error',
    `<h1>Something went wrong</h1><p class="error" role="alert">${escapeHtml(message)}</p>${
      retryUrl ? `<p><a href="${escapeHtml(retryUrl)}">Back to sign-in</a></p>` : '<p>Return to the application and try again.</p>'
    }`,
    stylesheet,
  );
}
