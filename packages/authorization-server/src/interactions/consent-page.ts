/**
 * The consent page (every value escaped, no inline script or style): who asks (the client,
 * marked unverified when its name is self-asserted), for what (each resource — the MCP
 * server — by name and URL, each scope by its description), where the answer goes, and for
 * whom ("Not you?" when an existing session was reused).
 */
import { escapeHtml, page } from '../http/html.js';
import type { ShownScope } from './scope-text.js';

export interface ConsentResource {
  /** The resource indicator (RFC 8707): the MCP server's URL. */
  resource: string;
  /** Its display name (`resources[].name`), if configured. */
  name?: string;
  scopes: ShownScope[];
  alreadyGranted: ShownScope[];
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
  /** The browser session was signed in before this request: offer "Not you? Use another account". */
  switchAccount?: boolean;
  resources: ConsentResource[];
  /** Nothing new is asked (the access was approved before): the user confirms it again. */
  reconfirm?: boolean;
  /** OpenID Connect scopes (the account itself: identity, profile, staying signed in). */
  oidcScopes: ShownScope[];
}

/** One scope as a list item: its description, or marked unknown (the account page uses it too). */
export function scopeItem(s: ShownScope): string {
  return s.description
    ? `<li>${escapeHtml(s.description)} <span class="muted">(<code>${escapeHtml(s.scope)}</code>)</span></li>`
    : `<li><code>${escapeHtml(s.scope)}</code> <span class="muted">(unknown permission: no description)</span></li>`;
}

const scopeList = (scopes: ShownScope[]) => `<ul>${scopes.map(scopeItem).join('')}</ul>`;

/** The resource as the heading sentence names it: its display name and URL, or the URL alone. */
function resourceLabel(r: ConsentResource): string {
  return r.name
    ? `<strong>${escapeHtml(r.name)}</strong> <span class="muted">(<code>${escapeHtml(r.resource)}</code>)</span>`
    : `<strong><code>${escapeHtml(r.resource)}</code></strong>`;
}

function target(v: ConsentView): string {
  const [only, ...more] = v.resources;
  if (!only) return `your account on <strong>${escapeHtml(v.serviceName)}</strong>`;
  return more.length ? `<strong>${v.resources.length} services</strong> (listed below)` : resourceLabel(only);
}

export function consentPage(v: ConsentView): string {
  const resources = v.resources
    .map(
      (r) => `<dt>Service</dt><dd>${r.name ? `<strong>${escapeHtml(r.name)}</strong><br>` : ''}<code>${escapeHtml(r.resource)}</code></dd>
<dt>${r.alreadyGranted.length ? 'New permissions' : 'Permissions'}</dt><dd>${r.scopes.length ? scopeList(r.scopes) : '<ul><li>Basic access</li></ul>'}</dd>${
        r.alreadyGranted.length ? `<dt>Already allowed</dt><dd class="muted">${scopeList(r.alreadyGranted)}</dd>` : ''
      }`,
    )
    .join('');
  const oidc = v.oidcScopes.length ? `<dt>Your account</dt><dd>${scopeList(v.oidcScopes)}</dd>` : '';
  const unverified = v.unverified
    ? ` <em class="badge">unverified</em> <span class="muted">(this name was supplied by the application itself)</span>`
    : '';
  const form = (body: string, cls?: string) =>
    `<form method="post" action="${escapeHtml(v.action)}"${cls ? ` class="${cls}"` : ''}>
<input type="hidden" name="csrf" value="${escapeHtml(v.csrf)}">
${body}
</form>`;
  return page(
    `Authorize ${v.clientName} — ${v.serviceName}`,
    `<h1>Authorize access</h1>
<p><strong>${escapeHtml(v.clientName)}</strong>${unverified} wants to access ${target(v)} as <strong>${escapeHtml(v.account)}</strong>.</p>
${v.switchAccount ? form('<p class="muted">Not you? <button type="submit" class="link" name="action" value="switch-account">Use another account</button></p>', 'switch') : ''}
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
${form(`<div class="actions"><button type="submit" class="primary" name="action" value="approve">Approve</button>
<button type="submit" name="action" value="deny">Deny</button></div>`)}`,
    v.stylesheet,
  );
}
