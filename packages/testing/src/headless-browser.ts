/**
 * A headless user agent for authorization flows: follows redirects by hand with a path-aware
 * cookie jar (oidc-provider scopes `_interaction` and `_interaction_resume` to their own paths)
 * and stops at the client's redirect URI instead of requesting it.
 */
import { parseForm, type ParsedForm } from '@mcp-auth-kit/protocol';
import { CookieJar } from 'tough-cookie';

export interface BrowserPage {
  url: string;
  status: number;
  headers: Headers;
  body: string;
}

export type FollowResult = { kind: 'redirect'; url: URL } | { kind: 'page'; page: BrowserPage };

export interface HeadlessBrowserOptions {
  /** The fetch to send requests with (default: the global one). */
  fetch?: typeof fetch;
}

export class HeadlessBrowser {
  readonly jar = new CookieJar();
  private readonly fetch: typeof fetch;

  constructor(options: HeadlessBrowserOptions = {}) {
    this.fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  async request(url: string, init: RequestInit = {}): Promise<BrowserPage> {
    const headers = new Headers(init.headers);
    const cookie = await this.jar.getCookieString(url);
    if (cookie) headers.set('cookie', cookie);
    const res = await this.fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      await this.jar.setCookie(line, url, { ignoreError: true });
    }
    return { url, status: res.status, headers: res.headers, body: await res.text() };
  }

  /**
   * Follows redirects until one points at `stopAt` (returned, not requested) or a page answers;
   * without `stopAt`, until a page answers.
   */
  async follow(url: string, stopAt?: string, init: RequestInit = {}, maxHops = 20): Promise<FollowResult> {
    let page = await this.request(url, init);
    for (let hop = 0; hop < maxHops; hop++) {
      const location = page.headers.get('location');
      if (!location || page.status < 300 || page.status >= 400) return { kind: 'page', page };
      const next = new URL(location, page.url);
      if (stopAt !== undefined && sameEndpoint(next, stopAt)) return { kind: 'redirect', url: next };
      page = await this.request(next.href);
    }
    throw new Error(`authorization flow: more than ${maxHops} redirects`);
  }

  /** Submits the first form of `page`, keeping its hidden fields (CSRF) and adding `fields`. */
  async submit(page: BrowserPage, fields: Record<string, string>, stopAt?: string): Promise<FollowResult> {
    const form = parseForm(page.body);
    if (!form) throw new Error(`authorization flow: no form on the page at ${new URL(page.url).pathname}`);
    return this.submitForm(page, form, fields, stopAt);
  }

  /** Submits `form` (one of `page`'s, see `parseForms`) with its hidden fields and `fields`. */
  submitForm(page: BrowserPage, form: ParsedForm, fields: Record<string, string>, stopAt?: string): Promise<FollowResult> {
    return this.follow(new URL(form.action, page.url).href, stopAt, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form.hidden, ...fields }),
    });
  }
}

function sameEndpoint(url: URL, redirectUri: string): boolean {
  const target = new URL(redirectUri);
  return url.origin === target.origin && url.pathname === target.pathname;
}
