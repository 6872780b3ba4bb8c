import { CookieJar } from 'tough-cookie';

/**
 * A headless browser stand-in for authorization flows: follows the AS's redirects with a
 * path-aware cookie jar (oidc-provider scopes its interaction cookies to paths) and stops
 * at the client's redirect URI without contacting it, unless asked to deliver the callback.
 */
export class HeadlessUserAgent {
  readonly jar = new CookieJar();
  /** Every URL visited, in order: lets tests assert what travelled through the front channel. */
  readonly visited: URL[] = [];

  async follow(
    start: string | URL,
    isCallback: (url: URL) => boolean,
    options: { maxHops?: number; deliver?: boolean } = {},
  ): Promise<URL> {
    let url = new URL(start);
    for (let hop = 0; hop < (options.maxHops ?? 20); hop++) {
      this.visited.push(url);
      if (isCallback(url)) {
        if (options.deliver) {
          const res = await fetch(url);
          await res.arrayBuffer();
        }
        return url;
      }
      const cookie = await this.jar.getCookieString(url.href);
      const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
      for (const setCookie of res.headers.getSetCookie()) {
        await this.jar.setCookie(setCookie, url.href, { ignoreError: true });
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.arrayBuffer();
        url = new URL(location, url);
        continue;
      }
      const body = await res.text();
      throw new Error(`authorization stopped at ${url.origin}${url.pathname} with HTTP ${res.status}: ${body.slice(0, 400)}`);
    }
    throw new Error('authorization did not reach the redirect URI within the hop limit');
  }
}

/** True for a URL whose origin and path equal the redirect URI's (any query). */
export function matchesRedirectUri(redirectUri: string | URL): (url: URL) => boolean {
  const target = new URL(redirectUri);
  return (url) => url.origin === target.origin && url.pathname === target.pathname;
}
