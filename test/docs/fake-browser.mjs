#!/usr/bin/env node
// Stands in for the user's browser (`xdg-open <url>`) in the README docs test: follows the
// authorization server's redirects with a cookie jar up to the client's loopback callback and
// delivers it. The demo stack runs with DEV_AUTO_LOGIN, so no page needs a click. Loopback only:
// any other host stops it.
import { appendFileSync } from 'node:fs';
import { CookieJar } from 'tough-cookie';

const log = (line) => process.env.FAKE_BROWSER_LOG && appendFileSync(process.env.FAKE_BROWSER_LOG, `${line}\n`);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const jar = new CookieJar();
let url = new URL(process.argv[2] ?? '');
try {
  for (let hop = 0; hop < 20; hop++) {
    if (!LOOPBACK.has(url.hostname)) throw new Error(`refusing a non-loopback host: ${url.host}`);
    log(`GET ${url.origin}${url.pathname}`);
    const cookie = await jar.getCookieString(url.href);
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const setCookie of res.headers.getSetCookie()) await jar.setCookie(setCookie, url.href, { ignoreError: true });
    const location = res.headers.get('location');
    await res.arrayBuffer();
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url);
      continue;
    }
    log(`stopped with HTTP ${res.status}`);
    process.exit(res.ok ? 0 : 1);
  }
  throw new Error('too many redirects');
} catch (err) {
  log(`error: ${err.message}`);
  process.exit(1);
}
