/**
 * A headless user agent for the authorization front channel: follows the AS's redirects with a
 * path-aware cookie jar (oidc-provider scopes its interaction cookies to paths) until the URL
 * reaches the client's redirect URI. DEV_AUTO_LOGIN means no page needs to be filled in.
 */
import { CookieJar } from 'tough-cookie';
import { UA_HEADER } from './servers.mjs';

export class UserAgent {
  jar = new CookieJar();

  /** Follows `start` until a URL with the redirect URI's origin and path; returns it (delivered when asked). */
  async follow(start, redirectUri, { deliver = false, maxHops = 20 } = {}) {
    const target = new URL(redirectUri);
    let url = new URL(start);
    for (let hop = 0; hop < maxHops; hop++) {
      if (url.origin === target.origin && url.pathname === target.pathname) {
        if (deliver) await (await fetch(url)).arrayBuffer();
        return url;
      }
      const cookie = await this.jar.getCookieString(url.href);
      const headers = { [UA_HEADER]: '1', ...(cookie && { cookie }) };
      const res = await fetch(url, { redirect: 'manual', headers });
      for (const line of res.headers.getSetCookie()) await this.jar.setCookie(line, url.href, { ignoreError: true });
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.arrayBuffer();
        url = new URL(location, url);
        continue;
      }
      const body = await res.text();
      throw new Error(`authorization stopped at ${url.pathname} with HTTP ${res.status}: ${body.slice(0, 200)}`);
    }
    throw new Error('authorization did not reach the redirect URI');
  }
}
