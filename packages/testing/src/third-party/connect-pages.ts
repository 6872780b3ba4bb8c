/**
 * How the headless connect driver reads the pages it meets, in one place: our authorization
 * server's connect pages (`packages/authorization-server/src/third-party/`: its login page, the
 * confirmation, the refusals, the final page) and the kit's provider's (sign-in and consent).
 * Pure: a page in, what to do with it out.
 *
 * Our AS, as it serves them: `GET <issuer>/connect/<ticket>` sends a browser that is not signed
 * in to the AS's login page (`username`, `password`, button `action=login`) and back; the
 * confirmation is a CSRF form with the buttons `action=connect` and `action=cancel`; a browser
 * signed in as another account than the link's gets 403 with a form offering `action=switch`;
 * an unknown, expired or used link gets a notice titled "Link expired"; the callback ends on a
 * page that says the provider "is connected" (every other end says "Not connected").
 */
import { decodeEntities, parseForms, type ParsedForm } from '@mcp-auth-kit/protocol';
import type { BrowserPage } from '../headless-browser.js';
import { PROVIDER_FORM } from './provider-pages.js';

export const AS_LOGIN_BUTTON = { action: 'login' } as const;
export const AS_CONNECT_BUTTON = { name: 'action', value: 'connect' } as const;
/** Only on the refusal for another signed-in account. */
export const AS_SWITCH_BUTTON = { name: 'action', value: 'switch' } as const;
/** The heading of the notice for an unknown, expired or used link. */
const LINK_EXPIRED = /^Link expired$/i;

/** Why the driver stopped. */
export type ConnectFlowErrorCode =
  /** The URL is not `https:`, nor `http:` on a loopback host. */
  | 'unsafe_url'
  /** Our AS refused the credentials (or asked for them again after accepting them). */
  | 'login_failed'
  /** Our AS refused the signed-in user (HTTP 403, offering to switch): the link was made for another user. */
  | 'wrong_user'
  /** Our AS does not know the link ("Link expired"): expired, already used, or never issued. */
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

/** Visible text (tags dropped, entities decoded, white space collapsed). */
const visible = (html: string) =>
  decodeEntities(html.replace(/<[^>]*>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();

/** The page's visible text, for messages. */
export function pageText(html: string): string {
  return visible(/<body\b[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html);
}

const heading = (html: string) => visible(/<h1\b[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1] ?? '');

const hasPassword = (form: ParsedForm) => form.fieldNames.includes('password');
const button = (form: ParsedForm, name: string, value?: string) =>
  form.submits.find((s) => s.name === name && (value === undefined || s.value === value));

/** A page's forms, its visible text, and its sign-in form (the one with a password field), if any. */
function readPage(page: BrowserPage): { forms: ParsedForm[]; text: string; signIn: ParsedForm | undefined } {
  const forms = parseForms(page.body);
  return { forms, text: pageText(page.body), signIn: forms.find(hasPassword) };
}

/** On a sign-in page: submit it, unless it came with another status than 200 (a refused sign-in, shown again). */
function signInStep(
  page: BrowserPage,
  text: string,
  refused: ConnectFlowErrorCode,
  submit: Omit<NextStep & { kind: 'submit' }, 'kind'>,
): NextStep {
  if (page.status !== 200) return { kind: 'stop', code: refused, text };
  return { kind: 'submit', ...submit };
}

/** What to do on a page of our authorization server. */
export function nextOnAuthorizationServer(page: BrowserPage, credentials: Credentials): NextStep {
  const { forms, text, signIn } = readPage(page);
  // The login page answers a refused sign-in with 401 (429 when throttled, 403 when disabled).
  if (signIn) return signInStep(page, text, 'login_failed', { form: signIn, fields: { ...credentials, ...AS_LOGIN_BUTTON }, login: 'as' });
  if (LINK_EXPIRED.test(heading(page.body))) return { kind: 'stop', code: 'link_expired', text };
  if (page.status === 403 && forms.some((f) => button(f, AS_SWITCH_BUTTON.name, AS_SWITCH_BUTTON.value))) {
    return { kind: 'stop', code: 'wrong_user', text };
  }
  if (page.status === 200) {
    const confirm = forms.find((f) => button(f, AS_CONNECT_BUTTON.name, AS_CONNECT_BUTTON.value));
    if (confirm) return { kind: 'submit', form: confirm, fields: { [AS_CONNECT_BUTTON.name]: AS_CONNECT_BUTTON.value } };
    if (/\bis connected\b/i.test(text) && !/\b(?:not|nothing was) connected\b/i.test(text)) return { kind: 'connected', text };
    return { kind: 'stop', code: 'not_connected', text };
  }
  return { kind: 'stop', code: 'connect_refused', text };
}

/** What to do on a page of the kit's provider: sign in, then allow. */
export function nextOnProvider(page: BrowserPage, credentials: Credentials): NextStep {
  const { forms, text, signIn } = readPage(page);
  if (signIn) {
    const fields = { ...credentials, [PROVIDER_FORM.button]: PROVIDER_FORM.signIn };
    return signInStep(page, text, 'provider_login_failed', { form: signIn, fields, login: 'provider' });
  }
  const consent = page.status === 200 ? forms.find((f) => button(f, PROVIDER_FORM.button, PROVIDER_FORM.approve)) : undefined;
  if (consent) return { kind: 'submit', form: consent, fields: { [PROVIDER_FORM.button]: PROVIDER_FORM.approve } };
  return { kind: 'stop', code: 'provider_refused', text };
}
