/**
 * How the headless connect driver reads the pages it meets, in one place: our authorization
 * server's (its login form, the connect confirmation, the final page) and the kit's provider's
 * (sign-in and consent). Pure: a page in, what to do with it out.
 *
 * The AS side follows the issue-41 contract (`<issuer>/connect/<ticket>`, a CSRF-protected
 * confirmation, `<issuer>/connect/callback`, a final page that says the account is connected)
 * and the AS's existing login form (`username`, `password`, button `action=login`). The
 * confirmation page is taken to be a form with a submit button named `connect`.
 */
import { decodeEntities, parseForms, type ParsedForm } from '@mcp-auth-kit/protocol';
import type { BrowserPage } from '../headless-browser.js';
import { PROVIDER_FORM } from './provider-pages.js';

export const AS_LOGIN_BUTTON = { action: 'login' } as const;
/** The AS connect page's confirmation: `<button name="action" value="connect">` (`src/third-party/pages.ts` of the AS). */
export const AS_CONNECT_BUTTON = { name: 'action', value: 'connect' } as const;

/** Why the driver stopped. */
export type ConnectFlowErrorCode =
  /** The URL is not `https:`, nor `http:` on a loopback host. */
  | 'unsafe_url'
  /** Our AS refused the credentials (or asked for them again after accepting them). */
  | 'login_failed'
  /** Our AS refused the signed-in user (HTTP 403): the link was made for another user. */
  | 'wrong_user'
  /** Our AS does not know the link (HTTP 404 / 410): expired, already used, or never issued. */
  | 'link_expired'
  /** Any other refusal or error page of our AS. */
  | 'connect_refused'
  /** The flow ended on a page of our AS that does not say the account is connected. */
  | 'not_connected'
  /** The provider refused the credentials. */
  | 'provider_login_failed'
  /** The provider showed an error page. */
  | 'provider_refused'
  /** More pages than a connect flow has. */
  | 'too_many_pages';

export type NextStep =
  | { kind: 'submit'; form: ParsedForm; fields: Record<string, string>; login?: 'as' | 'provider' }
  | { kind: 'connected'; text: string }
  | { kind: 'stop'; code: ConnectFlowErrorCode; text: string };

export interface Credentials {
  username: string;
  password: string;
}

/** The page's visible text (tags dropped, entities decoded, white space collapsed), for messages. */
export function pageText(html: string): string {
  const body = /<body\b[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html;
  return decodeEntities(body.replace(/<[^>]*>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();
}

const hasPassword = (form: ParsedForm) => form.fieldNames.includes('password');
const button = (form: ParsedForm, name: string, value?: string) =>
  form.submits.find((s) => s.name === name && (value === undefined || s.value === value));

/** What to do on a page of our authorization server. */
export function nextOnAuthorizationServer(page: BrowserPage, credentials: Credentials): NextStep {
  const forms = parseForms(page.body);
  const text = pageText(page.body);
  const login = forms.find(hasPassword);
  // The login page answers a refused sign-in with 401 (429 when throttled, 403 when disabled).
  if (login) {
    if (page.status !== 200) return { kind: 'stop', code: 'login_failed', text };
    return { kind: 'submit', form: login, fields: { ...credentials, ...AS_LOGIN_BUTTON }, login: 'as' };
  }
  if (page.status === 200) {
    for (const form of forms) {
      const connect = button(form, AS_CONNECT_BUTTON.name, AS_CONNECT_BUTTON.value);
      if (connect) return { kind: 'submit', form, fields: { [connect.name]: connect.value } };
    }
    // A consent step of the AS on the way (oidc-provider interaction): approved like the code flow does.
    for (const form of forms) {
      if (button(form, 'action', 'approve')) return { kind: 'submit', form, fields: { action: 'approve' } };
    }
    if (/\bconnected\b/i.test(text) && !/\bnot connected\b/i.test(text)) return { kind: 'connected', text };
  }
  if (page.status >= 200 && page.status < 300) return { kind: 'stop', code: 'not_connected', text };
  if (page.status === 403) return { kind: 'stop', code: 'wrong_user', text };
  if (page.status === 404 || page.status === 410) return { kind: 'stop', code: 'link_expired', text };
  return { kind: 'stop', code: 'connect_refused', text };
}

/** What to do on a page of the kit's provider: sign in, then allow. */
export function nextOnProvider(page: BrowserPage, credentials: Credentials): NextStep {
  const forms = parseForms(page.body);
  const text = pageText(page.body);
  const signIn = forms.find(hasPassword);
  if (signIn) {
    if (page.status !== 200) return { kind: 'stop', code: 'provider_login_failed', text };
    return { kind: 'submit', form: signIn, fields: { ...credentials, [PROVIDER_FORM.button]: PROVIDER_FORM.signIn }, login: 'provider' };
  }
  const consent = page.status === 200 ? forms.find((f) => button(f, PROVIDER_FORM.button, PROVIDER_FORM.approve)) : undefined;
  if (consent) return { kind: 'submit', form: consent, fields: { [PROVIDER_FORM.button]: PROVIDER_FORM.approve } };
  return { kind: 'stop', code: 'provider_refused', text };
}
