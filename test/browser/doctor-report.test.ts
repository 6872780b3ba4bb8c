import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { escapeHtml } from '@mcp-auth-kit/protocol';
import { runCli } from '../helpers/cli-process.js';
import { startSdkExampleServer, type SdkExampleServer } from '../helpers/sdk-example-server.js';
import { launchChromium, loopbackContext, SCREENSHOTS, screenshot } from './harness.js';

/**
 * The CLI README's doctor report (issue 45): `mcp-auth-kit doctor` against the MCP SDK's shipped
 * example server with its demo AS, in colour, rendered to HTML and screenshot with Debian chromium.
 * `npm run screenshots` (UPDATE_SCREENSHOTS=1) copies the PNG and the JSON to packages/cli/docs/.
 */
const DOCS_DIR = join(process.cwd(), 'packages', 'cli', 'docs');
const COLOURS: Record<string, string> = { '31': '#ff6b6b', '32': '#69db7c', '33': '#ffd43b', '36': '#66d9e8' };

/** Our own SGR subset (the terminal writer lets no other sequence through) as spans. */
export function ansiToHtml(text: string): string {
  let html = '';
  const open: string[] = [];
  for (const part of text.split(/(\u001b\[\d+m)/)) {
    const sgr = /^\u001b\[(\d+)m$/.exec(part);
    if (!sgr) {
      html += escapeHtml(part);
      continue;
    }
    const code = sgr[1]!;
    if (code === '39' || code === '22') {
      if (open.length > 0) html += '</span>';
      open.pop();
      continue;
    }
    const style = code === '1' ? 'font-weight:bold' : code === '2' ? 'opacity:.6' : `color:${COLOURS[code] ?? 'inherit'}`;
    open.push(code);
    html += `<span style="${style}">`;
  }
  return html + '</span>'.repeat(open.length);
}

describe('doctor report screenshot (issue 45)', () => {
  let browser: Browser;
  let sdk: SdkExampleServer;
  beforeAll(async () => {
    sdk = await startSdkExampleServer();
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    sdk?.close();
  });

  it('renders the coloured report of a real deployment', async () => {
    const token = (await sdk.tokens(sdk.mcpUrl)).access_token;
    const other = (await sdk.tokens('http://localhost:1/another-mcp')).access_token;
    // the bin as npm links it; the token from the environment (arguments are visible to other users)
    const args = ['doctor', sdk.mcpUrl, '--allow-private', '--other-resource-token', other];
    const env = { PATH: process.env.PATH, MCP_AUTH_KIT_DOCTOR_TOKEN: token };
    // the SDK example's default ports, so that the README does not show random ones
    const ports = (text: string) => text.replaceAll(`:${sdk.mcpPort}`, ':3000').replaceAll(`:${sdk.authPort}`, ':3001');
    const human = await runCli([...args, '--color', 'always'], env);
    expect(human.code).toBe(1);
    const text = ports(human.stdout);
    expect(text).toMatch(/\u001b\[31m {2}FAIL /);
    expect(text).not.toContain(token);
    const json = await runCli([...args, '--json'], env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'fail' });

    const { context } = await loopbackContext(browser, { width: 1100, height: 800 });
    const page = await context.newPage();
    const command = `$ mcp-auth-kit doctor ${ports(sdk.mcpUrl)} --allow-private --other-resource-token …`;
    await page.setContent(
      `<!doctype html><meta charset="utf-8"><body style="margin:0;background:#1e1e1e"><pre style="margin:0;padding:16px 20px;color:#e6e6e6;font:13px/1.45 'DejaVu Sans Mono',monospace;white-space:pre-wrap">${escapeHtml(command)}\n${ansiToHtml(text)}</pre></body>`,
    );
    const path = await screenshot(page, 'doctor-report');
    await context.close();
    writeFileSync(join(SCREENSHOTS, 'doctor-report.json'), ports(json.stdout));
    if (process.env.UPDATE_SCREENSHOTS) {
      mkdirSync(DOCS_DIR, { recursive: true });
      copyFileSync(path, join(DOCS_DIR, 'doctor-report.png'));
      copyFileSync(join(SCREENSHOTS, 'doctor-report.json'), join(DOCS_DIR, 'doctor-report.json'));
    }
  });
});
