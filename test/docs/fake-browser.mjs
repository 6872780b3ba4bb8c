#!/usr/bin/env node
// Stands in for the user's browser (`xdg-open <url>`) in the README docs test: the shared
// headless browser follows the authorization server's redirects up to the client's loopback
// callback and delivers it (its answer is the first page that is not a redirect). The demo stack
// runs with DEV_AUTO_LOGIN, so no page needs a click. Loopback only: any other host stops it.
import { appendFileSync, readFileSync } from 'node:fs';
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

/** The CLI opens a 0600 page that redirects (the URL stays out of argv): the URL is its link. */
function target(arg) {
  if (/^https?:/.test(arg)) return arg;
  const href = /<a href="([^"]*)"/.exec(readFileSync(arg, 'utf8'))?.[1] ?? '';
  return href
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

try {
  const page = await new LoopbackBrowser().follow(target(process.argv[2] ?? ''), () => false);
  log(`stopped with HTTP ${page.status}`);
  process.exit(page.status >= 200 && page.status < 300 ? 0 : 1);
} catch (err) {
  log(`error: ${err.message}`);
  process.exit(1);
}
