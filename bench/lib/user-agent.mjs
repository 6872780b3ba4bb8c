/**
 * The benchmarks' user agent: the repository's headless browser (test-utils: a real cookie jar,
 * as oidc-provider scopes its interaction cookies to paths), every request marked with
 * UA_HEADER so the counting listeners tell its hops from the client's. DEV_AUTO_LOGIN means no
 * page needs to be filled in.
 */
import { HeadlessBrowser, matchesRedirectUri } from '@mcp-auth-kit/test-utils';
import { UA_HEADER } from './servers.mjs';

export class UserAgent {
  browser = new HeadlessBrowser({ headers: { [UA_HEADER]: '1' } });

  /** Follows `start` until a URL with the redirect URI's origin and path; returns it (delivered when asked). */
  follow(start, redirectUri, { deliver = false, maxHops = 20 } = {}) {
    return this.browser.followToCallback(start, matchesRedirectUri(redirectUri), { deliver, maxHops });
  }
}
