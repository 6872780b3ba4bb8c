/**
 * Browser test harness: Debian's Chromium driven by playwright-core (never a downloaded
 * browser), a loopback redirect listener standing in for the MCP client, and a guard that
 * aborts any request leaving loopback.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startAuthServer, type RunningAuthServer, type StartAuthServerOptions } from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = join(process.cwd(), 'test-results', 'browser');
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };

/** The AS whose pages a browser test drives: loopback, memory storage, silent; `authorizationServer` adds users, upstreams, resources. */
export function startPagesAuthServer(
  resource: string,
  authorizationServer: StartAuthServerOptions['authorizationServer'],
): Promise<RunningAuthServer> {
  return startAuthServer({ port: 0, host: '127.0.0.1', resource, storage: { kind: 'memory' }, logger: silentLogger, authorizationServer });
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A context whose requests stay on loopback; CSP violations are collected. */
export async function loopbackContext(browser: Browser, viewport = DESKTOP): Promise<{ context: BrowserContext; cspViolations: string[] }> {
  const context = await browser.newContext({ viewport });
  const cspViolations: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.has(url.hostname)) return route.continue();
    return route.abort('blockedbyclient');
  });
  context.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
  });
  return { context, cspViolations };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

export interface RedirectListener {
  /** `http://127.0.0.1:<port>/callback` */
  redirectUri: string;
  close(): Promise<void>;
}

/** The MCP client's loopback redirect URI (RFC 8252 §7.3): answers with a small page. */
export async function startRedirectListener(): Promise<RedirectListener> {
  const server: Server = createServer((req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end('<!DOCTYPE html><html lang="en"><title>Callback</title><h1>Callback received</h1></html>');
    void req;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
