#!/usr/bin/env node
// Stands in for the user's browser (`xdg-open <url>`) in the README docs test: the shared
// headless browser follows the authorization server's redirects up to the client's loopback
// callback and delivers it (its answer is the first page that is not a redirect). The demo stack
// runs with DEV_AUTO_LOGIN, so no page needs a click. Loopback only: any other host stops it.
import { appendFileSync } from 'node:fs';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';

const log = (line) => process.env.FAKE_BROWSER_LOG && appendFileSync(process.env.FAKE_BROWSER_LOG, `${line}\n`);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

class LoopbackBrowser extends HeadlessBrowser {
  send(url, init) {
    if (!LOOPBACK.has(url.hostname)) throw new Error(`refusing a non-loopback host: ${url.host}`);
    log(`GET ${url.origin}${url.pathname}`);
    return super.send(url, init);
  }
}

try {
  const page = await new LoopbackBrowser().follow(process.argv[2] ?? '', () => false);
  log(`stopped with HTTP ${page.status}`);
  process.exit(page.status >= 200 && page.status < 300 ? 0 : 1);
} catch (err) {
  log(`error: ${err.message}`);
  process.exit(1);
}
