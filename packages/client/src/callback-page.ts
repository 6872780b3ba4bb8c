/**
 * The page the loopback listener answers the browser with (RFC 8252 §7.3 callback): says what
 * happened — signed in, access denied, or an error — and that the window can be closed. Styled
 * like the authorization server's pages with a small stylesheet of its own (the client does not
 * depend on the AS), inline and allowed by its hash in the CSP; no script, every value escaped.
 *
 * The page is answered before the client validates the response (RFC 9207 `iss`, the code
 * exchange), so "signed in" says the authorization arrived and the application is finishing.
 * The AS's `error_description` is shown only when the response's `iss` is the expected issuer:
 * a mix-up attacker who learnt the `state` must not put its own text on this page.
 */
import { createHash } from 'node:crypto';
import { escapeHtml } from '@mcp-auth-kit/protocol';

const STYLE = `*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;line-height:1.45;background:#fafafa}
main{background:#fff;border:1px solid #ddd;border-radius:8px;padding:1rem 1.25rem 1.25rem}
h1{font-size:1.4rem;margin:.2rem 0 .8rem}
.ok{border-left:4px solid #1e7b34}.denied{border-left:4px solid #c9a227}.failed{border-left:4px solid #b3261e}
.error{background:#fde2e1;border:1px solid #b3261e;padding:.6rem;border-radius:4px;overflow-wrap:anywhere}
.muted{color:#555;font-size:.9rem}
code{overflow-wrap:anywhere;background:#f3f3f3;padding:0 .2rem;border-radius:3px}
@media (max-width:30rem){body{margin:0 auto;padding:0 .5rem}main{border-right:none;border-top:none;border-bottom:none;padding:.75rem .5rem}}
@media (prefers-color-scheme:dark){body{background:#121212;color:#eee}main{background:#1e1e1e;border-color:#333}code{background:#2a2a2a}.error{background:#3d1512;color:#fff}.muted{color:#bbb}}`;

/** The CSP of every listener page: nothing but the one inline stylesheet above. */
export const CALLBACK_PAGE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

export type CallbackOutcome = 'signed-in' | 'denied' | 'error' | 'ignored';

function page(kind: 'ok' | 'denied' | 'failed', title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main class="${kind}"><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

const CLOSE = '<p>You can close this window and return to the application.</p>';

/** RFC 6749 §4.1.2.1 `error`: NQSCHAR only; anything else (or too long) is not shown. */
const shownCode = (code: string) => (/^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(code) ? code : undefined);

/** The page for a callback whose `state` matched. `issuer`: the expected `iss` (RFC 9207). */
export function callbackPage(url: URL, issuer?: string): { outcome: CallbackOutcome; html: string } {
  const error = url.searchParams.get('error');
  if (error === 'access_denied') {
    return {
      outcome: 'denied',
      html: page('denied', 'Access denied', `<p>The sign-in was cancelled or denied: the application did not get access.</p>${CLOSE}`),
    };
  }
  if (error !== null) {
    const code = shownCode(error);
    const fromIssuer = issuer !== undefined && url.searchParams.get('iss') === issuer;
    const description = fromIssuer ? url.searchParams.get('error_description')?.slice(0, 500) : undefined;
    return {
      outcome: 'error',
      html: page(
        'failed',
        'Sign-in failed',
        `<p>The authorization server refused the request${code ? ` (<code>${escapeHtml(code)}</code>)` : ''}.</p>${
          description ? `<p class="error" role="alert">${escapeHtml(description)}</p>` : ''
        }${CLOSE}<p class="muted">The application says what to do next.</p>`,
      ),
    };
  }
  if (!url.searchParams.get('code')) {
    return {
      outcome: 'error',
      html: page('failed', 'Sign-in failed', `<p>The response carried neither an authorization code nor an error.</p>${CLOSE}`),
    };
  }
  return {
    outcome: 'signed-in',
    html: page('ok', 'Signed in', `<p>The application received your authorization and is finishing signing you in.</p>${CLOSE}`),
  };
}

/** The page for a request without exactly the pending `state`: answered 400 and ignored. */
export const IGNORED_PAGE = page(
  'failed',
  'Response ignored',
  '<p>This response does not belong to the sign-in the application is waiting for, and was ignored.</p><p class="muted">If you started a sign-in, finish it in the window the application opened.</p>',
);
