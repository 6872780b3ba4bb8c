/**
 * Driving the operator console over raw HTTP (issue 44): sign in through the AS's own login page
 * (`<issuer>/console/sign-in`), read a page's forms, send one. Each test controls every field.
 */
import { parseForms } from '@mcp-auth-kit/protocol';
import { type BrowserPage, HeadlessBrowser, isUrl } from '@mcp-auth-kit/test-utils';

export interface ConsoleUser {
  username: string;
  password: string;
}

/** A browser signed in to the console as `user` (the page it landed on is `landed`). */
export async function signInToConsole(issuer: string, user: ConsoleUser, browser = new HeadlessBrowser()) {
  const never = () => false;
  const login = await browser.follow(`${issuer}/console/sign-in`, never);
  if (isUrl(login) || login.status !== 200 || !login.body.includes('name="password"')) throw new Error('expected the login page');
  const landed = await browser.submit(login, { username: user.username, password: user.password, action: 'login' }, never);
  if (isUrl(landed)) throw new Error('unexpected stop');
  return { browser, landed };
}

/** The console page at `path` (no redirects followed). */
export const consolePage = (browser: HeadlessBrowser, issuer: string, path: string): Promise<BrowserPage> =>
  browser.request(`${issuer}/console${path}`);

/** The hidden fields of the page's form posting to `path` (CSRF token included). */
export function formFields(page: BrowserPage, path: string, match: (hidden: Record<string, string>) => boolean = () => true) {
  const form = parseForms(page.body).find((f) => f.action.endsWith(`/console${path}`) && match(f.hidden));
  if (!form) throw new Error(`no form posting to ${path} on ${page.url}`);
  return form.hidden;
}

/** A POST of `fields` to the console path (no redirects followed): what a form, or an attacker, sends. */
export const consolePost = (
  browser: HeadlessBrowser,
  issuer: string,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) =>
  browser.request(`${issuer}/console${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
