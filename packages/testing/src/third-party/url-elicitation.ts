/**
 * Completes a URL-mode elicitation headlessly, as a user would in the browser: the connect URL
 * of our authorization server (`<issuer>/connect/<ticket>`), its login as the MCP user, the
 * confirmation, the provider's sign-in and consent as the provider user, the callback back at
 * our AS, and its final page. One cookie jar for the whole flow, redirects followed by hand.
 */
import { isLoopbackHost } from '@mcp-auth-kit/protocol';
import { HeadlessBrowser, type BrowserPage, type FollowResult } from '../headless-browser.js';
import { nextOnAuthorizationServer, nextOnProvider, type ConnectFlowErrorCode, type Credentials } from './connect-pages.js';

export interface CompleteUrlElicitationOptions {
  /** The MCP user's account at our authorization server (the `sub` the connect link was made for). */
  authServer: Credentials;
  /** The user's account at the third-party provider (`startThirdPartyProvider`'s users). */
  provider: Credentials;
  /** The fetch to send requests with (default: the global one). */
  fetch?: typeof fetch;
}

export interface UrlElicitationResult {
  /** The final page of our authorization server. */
  finalUrl: string;
  /** Its visible text (it says the account is connected). */
  text: string;
}

/** Why a connect flow did not end connected: `code`, and the page it stopped on. */
export class ConnectFlowError extends Error {
  constructor(
    readonly code: ConnectFlowErrorCode,
    message: string,
    /** The HTTP status of the page the flow stopped on (absent before the first request). */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ConnectFlowError';
  }
}

/** Connect flows have a handful of pages; more means a loop. */
const MAX_PAGES = 12;

/** MCP elicitation "Safe URL Handling": https, or http on loopback only (development). */
function openableUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConnectFlowError('unsafe_url', 'the elicitation URL is not an absolute URL');
  }
  if (parsed.protocol === 'https:' || (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname))) return parsed;
  throw new ConnectFlowError('unsafe_url', `refusing to open ${parsed.protocol}//${parsed.host}: https, or http on a loopback host only`);
}

/** `origin/path` of a page: enough to say where the flow stopped (no query: codes and state stay out of messages). */
const where = (page: BrowserPage) => {
  const url = new URL(page.url);
  return `${url.origin}${url.pathname}`;
};

function describe(code: ConnectFlowErrorCode, options: CompleteUrlElicitationOptions): string {
  switch (code) {
    case 'login_failed':
      return `the authorization server did not accept the sign-in as ${options.authServer.username}`;
    case 'wrong_user':
      return `the authorization server refused the link for ${options.authServer.username}: it was made for another user`;
    case 'link_expired':
      return 'the authorization server does not know the link: expired, already used, or never issued';
    case 'connect_refused':
      return 'the authorization server refused to connect';
    case 'not_connected':
      return 'the flow ended without the account being connected';
    case 'provider_login_failed':
      return `the provider did not accept the sign-in as ${options.provider.username}`;
    case 'provider_refused':
      return 'the provider refused the authorization request';
    default:
      return 'the connect flow stopped';
  }
}

/**
 * Drives the connect flow behind a URL-mode elicitation (`url` as the MCP client received it)
 * to its end: signed in to our AS as `authServer`, connected at the provider as `provider`.
 *
 * @returns The final page, which says the account is connected.
 * @throws {ConnectFlowError} with a `code` for each way it can fail (`unsafe_url`,
 *   `login_failed`, `wrong_user`, `link_expired`, `connect_refused`, `not_connected`,
 *   `provider_login_failed`, `provider_refused`, `too_many_pages`); the message names the page
 *   and quotes its text.
 */
export async function completeUrlElicitation(url: string, options: CompleteUrlElicitationOptions): Promise<UrlElicitationResult> {
  const start = openableUrl(url);
  const browser = new HeadlessBrowser({ fetch: options.fetch });
  const signedIn = { as: false, provider: false };
  let step: FollowResult = await browser.follow(start.href);
  for (let pages = 0; pages < MAX_PAGES && step.kind === 'page'; pages++) {
    const { page } = step;
    const onAuthorizationServer = new URL(page.url).origin === start.origin;
    const next = onAuthorizationServer ? nextOnAuthorizationServer(page, options.authServer) : nextOnProvider(page, options.provider);
    if (next.kind === 'connected') return { finalUrl: page.url, text: next.text };
    if (next.kind === 'stop') {
      throw new ConnectFlowError(
        next.code,
        `${describe(next.code, options)} (HTTP ${page.status} at ${where(page)}): ${next.text.slice(0, 300)}`,
        page.status,
      );
    }
    if (next.login) {
      // A login page again after a successful sign-in would loop: report it as the failure it is.
      if (signedIn[next.login]) {
        const code = next.login === 'as' ? 'login_failed' : 'provider_login_failed';
        throw new ConnectFlowError(code, `${describe(code, options)}: asked to sign in again at ${where(page)}`, page.status);
      }
      signedIn[next.login] = true;
    }
    step = await browser.submitForm(page, next.form, next.fields);
  }
  throw new ConnectFlowError('too_many_pages', `the connect flow did not end after ${MAX_PAGES} pages`);
}
