/**
 * A headless "browser" for authorization flows: follows redirects by hand with a path-aware
 * cookie jar (interaction cookies are path-scoped) and stops at the client's redirect URI.
 */
interface Cookie {
  name: string;
  value: string;
  path: string;
  origin: string;
}

export interface Page {
  url: string;
  status: number;
  headers: Headers;
  body: string;
}

export class UserAgent {
  readonly cookies: Cookie[] = [];

  private store(url: URL, headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      let path = url.pathname.replace(/\/[^/]*$/, '') || '/';
      let expired = false;
      for (const attr of attrs) {
        const [k, v = ''] = attr.trim().split('=');
        const key = k!.toLowerCase();
        if (key === 'path') path = v;
        if (key === 'max-age' && Number(v) <= 0) expired = true;
        if (key === 'expires' && Date.parse(v) < Date.now()) expired = true;
      }
      const index = this.cookies.findIndex((c) => c.name === name && c.path === path && c.origin === url.origin);
      if (index >= 0) this.cookies.splice(index, 1);
      if (!expired) this.cookies.push({ name, value, path, origin: url.origin });
    }
  }

  cookieHeader(url: URL): string {
    return this.cookies
      .filter(
        (c) =>
          c.origin === url.origin &&
          (url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`) || c.path === '/'),
      )
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  async request(url: string, init: RequestInit = {}): Promise<Page> {
    const target = new URL(url);
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader(target);
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(target, { ...init, headers, redirect: 'manual' });
    this.store(target, res.headers);
    return { url: target.href, status: res.status, headers: res.headers, body: await res.text() };
  }

  /**
   * Follows redirects from `url` until a Location starts with `stopAt` (returned as a URL) or a
   * page without redirect is reached (returned as a Page).
   */
  async follow(url: string, stopAt: string, init: RequestInit = {}, maxHops = 15): Promise<URL | Page> {
    let page = await this.request(url, init);
    for (let hop = 0; hop < maxHops; hop++) {
      const location = page.headers.get('location');
      if (!location || page.status < 300 || page.status >= 400) return page;
      const next = new URL(location, page.url);
      if (next.href.startsWith(stopAt)) return next;
      page = await this.request(next.href);
    }
    throw new Error('too many redirects');
  }

  /** Submits the first form of `page` with `fields` (hidden fields such as csrf are kept). */
  async submit(page: Page, fields: Record<string, string>, stopAt: string): Promise<URL | Page> {
    const action = /<form[^>]*action="([^"]+)"/.exec(page.body)?.[1];
    if (!action) throw new Error(`no form on page ${page.url}`);
    const hidden: Record<string, string> = {};
    for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) hidden[m[1]!] = decodeEntities(m[2]!);
    const body = new URLSearchParams({ ...hidden, ...fields });
    return this.follow(new URL(decodeEntities(action), page.url).href, stopAt, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
  }
}

function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export function isUrl(value: URL | Page): value is URL {
  return value instanceof URL;
}
