import { Cookie, CookieJar } from 'tough-cookie';
import { parseForm } from '@mcp-auth-kit/protocol';

/** One answer the browser received (redirects included). */
export interface BrowserPage {
  url: string;
  status: number;
  headers: Headers;
  body: string;
}

/**
 * Where a redirect chain ends: a string is a URL prefix (a redirect URI, with or without query),
 * a function decides for each URL. The matching URL is returned without being requested.
 */
export type StopAt = string | ((url: URL) => boolean);

/** A cookie as the jar holds it, for tests that look at (or drop) the session a flow left. */
export interface StoredCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
}

export interface HeadlessBrowserOptions {
  /** The jar to use (e.g. shared with raw requests of the test); a fresh one by default. */
  jar?: CookieJar;
  /** Headers sent with every request (a marker header, a user-agent string). */
  headers?: Record<string, string>;
}

/**
 * A headless browser for authorization flows: requests with `redirect: 'manual'`, follows
 * redirects itself and keeps cookies in a real jar (tough-cookie, RFC 6265: path-scoped, as
 * oidc-provider scopes its interaction cookies, expiry honoured, host-wide across ports like a
 * browser). It stops at the client's redirect URI instead of requesting it (unless told to
 * deliver it) and runs no scripts: pages are read and their first form submitted.
 */
export class HeadlessBrowser {
  readonly jar: CookieJar;
  /** Every answer received, in order: what travelled through the front channel. */
  readonly history: { url: string; status: number }[] = [];
  private readonly defaultHeaders: Record<string, string>;

  constructor(options: HeadlessBrowserOptions = {}) {
    this.jar = options.jar ?? new CookieJar();
    this.defaultHeaders = options.headers ?? {};
  }

  /** The Cookie header the jar sends to `url` ('' when none). */
  cookieHeader(url: string | URL): Promise<string> {
    return this.jar.getCookieString(String(url));
  }

  /** The unexpired cookies in the jar, every host. */
  get cookies(): StoredCookie[] {
    const now = new Date();
    return (this.jar.serializeSync()?.cookies ?? [])
      .map((json) => Cookie.fromJSON(json))
      .filter((c): c is Cookie => c !== undefined && (c.expiryTime(now) ?? Number.POSITIVE_INFINITY) > now.getTime())
      .map((c) => ({ name: c.key, value: c.value, domain: c.domain ?? '', path: c.path ?? '/' }));
  }

  /** Drops the cookies `match` selects (e.g. one server's session, to sign in again). */
  async removeCookies(match: (cookie: StoredCookie) => boolean): Promise<void> {
    for (const cookie of this.cookies) {
      if (match(cookie)) await this.jar.store.removeCookie(cookie.domain, cookie.path, cookie.name);
    }
  }

  /** One request with the jar's cookies; cookies set by the answer are stored. Never follows. */
  async request(url: string | URL, init: RequestInit = {}): Promise<BrowserPage> {
    const target = new URL(url);
    const headers = new Headers(this.defaultHeaders);
    for (const [name, value] of new Headers(init.headers)) headers.set(name, value);
    const cookie = await this.cookieHeader(target);
    if (cookie) headers.set('cookie', cookie);
    const res = await this.send(target, { ...init, headers });
    for (const line of res.headers.getSetCookie()) await this.jar.setCookie(line, target.href, { ignoreError: true });
    this.history.push({ url: target.href, status: res.status });
    return { url: target.href, status: res.status, headers: res.headers, body: await res.text() };
  }

  /** The transport: a test standing in for a proxy overrides it (cookies stay under `url`). */
  protected send(url: URL, init: RequestInit): Promise<Response> {
    return fetch(url, { ...init, redirect: 'manual' });
  }

  /**
   * Requests `start` (with `init`) and follows redirects until a URL matches `stopAt` (returned
   * as a URL, not requested) or an answer is not a redirect (returned as a page).
   */
  async follow(start: string | URL, stopAt: StopAt, init: RequestInit = {}, maxHops = 20): Promise<URL | BrowserPage> {
    const stop = stopPredicate(stopAt);
    let url = new URL(start);
    if (stop(url)) return url;
    let page = await this.request(url, init);
    for (let hop = 0; hop < maxHops; hop++) {
      const location = page.headers.get('location');
      if (!location || page.status < 300 || page.status >= 400) return page;
      url = new URL(location, page.url);
      if (stop(url)) return url;
      page = await this.request(url);
    }
    throw new Error(`more than ${maxHops} redirects from ${new URL(start).pathname}`);
  }

  /**
   * Follows an authorization URL to the redirect URI, which must be reached without a page to
   * fill in (auto-login, consent already given); `deliver` then requests it (a loopback listener).
   */
  async followToCallback(start: string | URL, stopAt: StopAt, options: { deliver?: boolean; maxHops?: number } = {}): Promise<URL> {
    const end = await this.follow(start, stopAt, {}, options.maxHops);
    if (!isUrl(end)) {
      const { origin, pathname } = new URL(end.url);
      throw new Error(`authorization stopped at ${origin}${pathname} with HTTP ${end.status}: ${end.body.slice(0, 400)}`);
    }
    if (options.deliver) await (await fetch(end, { headers: this.defaultHeaders })).arrayBuffer();
    return end;
  }

  /** Submits the first form of `page` (its hidden fields, such as a CSRF token, kept) with `fields`, then follows. */
  async submit(page: BrowserPage, fields: Record<string, string>, stopAt: StopAt): Promise<URL | BrowserPage> {
    const form = parseForm(page.body);
    if (!form) throw new Error(`no form on the page at ${page.url}`);
    return this.follow(new URL(form.action, page.url), stopAt, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form.hidden, ...fields }),
    });
  }
}

/** Narrows what `follow` and `submit` return: the redirect that matched, or a page. */
export function isUrl(value: URL | BrowserPage): value is URL {
  return value instanceof URL;
}

/** True for a URL whose origin and path equal the redirect URI's (any query). */
export function matchesRedirectUri(redirectUri: string | URL): (url: URL) => boolean {
  const target = new URL(redirectUri);
  return (url) => url.origin === target.origin && url.pathname === target.pathname;
}

function stopPredicate(stopAt: StopAt): (url: URL) => boolean {
  return typeof stopAt === 'string' ? (url) => url.href.startsWith(stopAt) : stopAt;
}
