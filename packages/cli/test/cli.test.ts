import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { run, type CliIo } from '../src/program.js';
import { inCi } from '../src/browser.js';
import { headlessBrowser } from '../../client/test/helpers/harness.js';
import { recordingIo } from './helpers/io.js';
import { notesStack } from './helpers/notes-stack.js';

const stack = notesStack('mak-cli-', () => {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool('read', { description: 'read notes' }, async () => ({ content: [{ type: 'text', text: 'notes' }] }));
  server.registerTool('write', { description: 'write a note' }, async () => ({ content: [{ type: 'text', text: 'written' }] }));
  return server;
});

const signIn = async (url: URL) => {
  await headlessBrowser(url);
  return true;
};
const io = (extra: Partial<CliIo> = {}, env: NodeJS.ProcessEnv = {}) =>
  recordingIo({ MCP_AUTH_KIT_HOME: stack.home, ...env }, { open: signIn, ...extra });

describe('mcp-auth-kit CLI', () => {
  it('login opens the browser, shows progress, stores tokens in a 0600 file under $MCP_AUTH_KIT_HOME', async () => {
    const t = io();
    expect(await run(['login', stack.rs.mcpUrl], t.io)).toBe(0);
    expect(t.opened).toHaveLength(1);
    expect(t.err()).toContain('Open this URL to authorize');
    expect(t.err()).toContain(t.opened[0]!.href);
    expect(t.err()).toContain('Waiting for you to sign in and allow access in the browser');
    expect(t.out()).toContain(`Logged in to ${stack.rs.mcpUrl} via ${stack.as.issuer}`);
    expect(statSync(join(stack.home, 'store.json')).mode & 0o777).toBe(0o600);
  });

  it('status lists the server without printing any token', async () => {
    const t = io();
    expect(await run(['status'], t.io)).toBe(0);
    expect(t.out()).toContain(stack.rs.mcpUrl);
    expect(t.out()).toMatch(/status: {3}logged in; access token valid until .* UTC \(in \d+ (s|min|h)\)/);
    const j = io();
    expect(await run(['status', '--json'], j.io)).toBe(0);
    const rows = JSON.parse(j.out()) as Array<Record<string, unknown>>;
    expect(rows[0]).toMatchObject({ server: stack.rs.mcpUrl, issuer: stack.as.issuer, authenticated: true, has_refresh_token: true });
    expect(j.out()).not.toMatch(/"access_token"|"refresh_token"/);
    expect(j.out()).not.toMatch(/eyJ/); // no JWT in the output
  });

  it('tools lists the tools with the stored token (no new authorization)', async () => {
    const n = stack.as.authorizationRequests.length;
    const t = io();
    expect(await run(['tools', stack.rs.mcpUrl], t.io)).toBe(0);
    expect(t.out()).toContain('read — read notes');
    expect(t.out()).toContain('write — write a note');
    expect(stack.as.authorizationRequests.length).toBe(n);
  });

  it('call steps up for a tool that needs more scope and prints the result', async () => {
    const t = io();
    expect(await run(['call', stack.rs.mcpUrl, 'write', '{"text":"hi"}'], t.io)).toBe(0);
    expect(JSON.parse(t.out()).content).toEqual([{ type: 'text', text: 'written' }]);
    expect(t.err()).toContain('More permissions needed');
  });

  it('call with arguments that are not a JSON object fails with a clear message', async () => {
    const t = io();
    expect(await run(['call', stack.rs.mcpUrl, 'write', '[1,2]'], t.io)).toBe(1);
    expect(t.err()).toContain('the tool arguments must be a JSON object, not an array');
  });

  it('logout forgets the server; status then reports nothing', async () => {
    const t = io();
    expect(await run(['logout', stack.rs.mcpUrl], t.io)).toBe(0);
    const s = io();
    await run(['status'], s.io);
    expect(s.out()).toContain('Not logged in');
  });

  it('--no-browser only prints the URL; the user completes the flow elsewhere', async () => {
    const t = io({ open: async () => expect.unreachable('must not open a browser') });
    const done = run(['--no-browser', 'login', stack.rs.mcpUrl], t.io);
    let url: string | undefined;
    for (let i = 0; i < 200 && !url; i++) {
      url = /https?:\/\/\S+\/auth\?\S+/.exec(t.err())?.[0];
      if (!url) await new Promise((r) => setTimeout(r, 10));
    }
    expect(url).toBeDefined();
    await headlessBrowser(new URL(url!));
    expect(await done).toBe(0);
  });

  it('in CI no browser is opened', async () => {
    expect(inCi({ CI: 'true' })).toBe(true);
    expect(inCi({ CI: 'false' })).toBe(false);
    expect(inCi({})).toBe(false);
    const t = io({ open: async () => expect.unreachable('must not open a browser in CI') }, { CI: 'true' });
    expect(await run(['--timeout', '1', 'login', `${stack.rs.mcpUrl}`], t.io)).toBe(1);
    expect(t.err()).toContain('MCP_AUTH_AUTHORIZATION_TIMEOUT');
  });

  it('--client-id without --issuer is refused (credentials are bound to one AS)', async () => {
    const t = io();
    expect(await run(['--client-id', 'x', 'login', stack.rs.mcpUrl], t.io)).toBe(1);
    expect(t.err()).toContain('--client-id needs --issuer');
  });

  it('--client-credentials without a secret is refused before any request', async () => {
    const t = io();
    expect(await run(['--client-credentials', '--client-id', 'svc', 'login', stack.rs.mcpUrl], t.io)).toBe(1);
    expect(t.err()).toContain('--client-credentials needs a client secret');
  });

  it('--client-credentials without --issuer is refused before any request (the secret is bound to one AS)', async () => {
    const t = io({}, { MCP_AUTH_KIT_CLIENT_SECRET: 'zq-7f3-value' });
    const before = stack.as.hits.get('/token') ?? 0;
    expect(await run(['--client-credentials', '--client-id', 'svc', 'login', stack.rs.mcpUrl], t.io)).toBe(1);
    expect(t.err()).toContain('--client-credentials needs --issuer');
    expect(t.err()).not.toContain('zq-7f3-value');
    expect(stack.as.hits.get('/token') ?? 0).toBe(before);
  });

  it('--client-secret without --client-id is refused', async () => {
    const t = io();
    expect(await run(['--client-secret', 'zq-7f3-value', 'login', stack.rs.mcpUrl], t.io)).toBe(1);
    expect(t.err()).toContain('--client-secret needs --client-id and --issuer');
    expect(t.err()).not.toContain('zq-7f3-value');
  });

  it('the bin starts with a shebang and prints help (from the build)', async () => {
    const bin = join(dirname(fileURLToPath(import.meta.url)), '../bin/mcp-auth-kit.js');
    expect(existsSync(join(dirname(bin), '../dist/program.js')), 'build the package first: npx tsc -b packages/cli').toBe(true);
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--help']);
    expect(stdout).toContain('Usage: mcp-auth-kit');
  });
});
