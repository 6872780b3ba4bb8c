import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, isListening } from '@mcp-auth-kit/test-utils';
import { cleanEnv, run } from './helpers/process.js';

// `npm start` = build, then scripts/start.mjs. This runs the script itself on free ports with a
// temporary DATA_DIR; it needs both apps built (`npm test` builds first).
const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(root, 'scripts/start.mjs');
const authMain = join(root, 'apps/auth-server/dist/main.js');
const mcpMain = join(root, 'apps/demo-mcp-server/dist/main.js');
const missing = [authMain, mcpMain].filter((file) => !existsSync(file));
const skipReason = missing.length > 0 ? ` (skipped: ${missing.map((f) => f.slice(root.length)).join(', ')} not built)` : '';

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-start-'));
  dataDirs.push(dir);
  return dir;
}

describe.skipIf(missing.length > 0)(`scripts/start.mjs${skipReason}`, () => {
  it('starts AS and MCP server, waits for both, prints the URLs, stops both on SIGINT with exit code 0', async () => {
    const asPort = await freePort();
    const mcpPort = await freePort();
    const proc = run(
      process.execPath,
      [script],
      cleanEnv({ AS_PORT: String(asPort), MCP_PORT: String(mcpPort), DATA_DIR: tempDataDir() }),
      root,
    );
    try {
      await proc.waitForOutput(/\[start\] ready/, 90_000);
      const issuer = `http://localhost:${asPort}`;
      const metadata = (await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as Record<string, any>;
      expect(metadata.issuer).toBe(issuer);
      const prm = (await (await fetch(`http://localhost:${mcpPort}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
        string,
        any
      >;
      expect(prm.resource).toBe(`http://localhost:${mcpPort}/mcp`);
      expect(prm.authorization_servers).toEqual([issuer]);
      const output = proc.output();
      expect(output).toContain(issuer);
      expect(output).toContain(`http://localhost:${mcpPort}/mcp`);
      expect(output).toMatch(/^\[auth\] /m);
      expect(output).toMatch(/^\[mcp\] /m);
    } finally {
      proc.child.kill('SIGINT');
    }
    const { code } = await proc.exited;
    expect(code).toBe(0);
    expect(await isListening(asPort)).toBe(false);
    expect(await isListening(mcpPort)).toBe(false);
  });

  it('Ctrl-C in a terminal (SIGINT to the whole process group) stops everything with exit code 0', async () => {
    const asPort = await freePort();
    const mcpPort = await freePort();
    const proc = run(
      process.execPath,
      [script],
      cleanEnv({ AS_PORT: String(asPort), MCP_PORT: String(mcpPort), DATA_DIR: tempDataDir() }),
      root,
      { detached: true },
    );
    try {
      await proc.waitForOutput(/\[start\] ready/, 90_000);
      process.kill(-proc.child.pid!, 'SIGINT');
      const { code } = await proc.exited;
      expect(code).toBe(0);
      expect(proc.output()).not.toMatch(/exited unexpectedly/);
      expect(await isListening(asPort)).toBe(false);
      expect(await isListening(mcpPort)).toBe(false);
    } finally {
      try {
        process.kill(-proc.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  it('under npm, if its parent shell is killed (signal sent to npm only), it stops both by itself', async () => {
    const asPort = await freePort();
    const mcpPort = await freePort();
    // Like `npm start`: npm → sh -c → node scripts/start.mjs (`; true` keeps sh from exec'ing node).
    const proc = run(
      '/bin/sh',
      ['-c', `"${process.execPath}" "${script}"; true`],
      cleanEnv({
        AS_PORT: String(asPort),
        MCP_PORT: String(mcpPort),
        DATA_DIR: tempDataDir(),
        npm_lifecycle_event: 'start',
      }),
      root,
    );
    await proc.waitForOutput(/\[start\] ready/, 90_000);
    proc.child.kill('SIGKILL');
    await proc.waitForOutput(/\[start\] stopped/, 30_000).catch(() => undefined);
    expect(proc.output()).toMatch(/parent process is gone/);
    expect(await isListening(asPort)).toBe(false);
    expect(await isListening(mcpPort)).toBe(false);
  });

  it('when a running child dies, stops the other and exits non-zero', async () => {
    const asPort = await freePort();
    const mcpPort = await freePort();
    const proc = run(
      process.execPath,
      [script],
      cleanEnv({ AS_PORT: String(asPort), MCP_PORT: String(mcpPort), DATA_DIR: tempDataDir() }),
      root,
    );
    try {
      await proc.waitForOutput(/\[start\] ready/, 90_000);
      expect(await isListening(asPort)).toBe(true);
      const mcpPid = Number(/started the demo MCP server \(pid (\d+)\)/.exec(proc.output())?.[1]);
      expect(mcpPid).toBeGreaterThan(0);
      process.kill(mcpPid, 'SIGKILL');
      const { code } = await proc.exited;
      expect(code).not.toBe(0);
      expect(proc.output()).toMatch(/demo MCP server exited unexpectedly \(SIGKILL\)/);
      expect(await isListening(asPort)).toBe(false);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it('when one child dies (MCP port taken), stops the other and exits non-zero', async () => {
    const asPort = await freePort();
    const mcpPort = await freePort();
    // Something else owns the MCP port; it drops every connection (including readiness probes).
    const blocker: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => blocker.listen(mcpPort, '127.0.0.1', resolve));
    try {
      const proc = run(
        process.execPath,
        [script],
        cleanEnv({ AS_PORT: String(asPort), MCP_PORT: String(mcpPort), DATA_DIR: tempDataDir() }),
        root,
      );
      const { code } = await proc.exited;
      expect(code).not.toBe(0);
      expect(proc.output()).toMatch(/demo MCP server exited unexpectedly/);
      expect(await isListening(asPort)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});

describe('scripts/start.mjs input checks', () => {
  it('refuses an invalid AS_PORT before starting anything', async () => {
    const proc = run(process.execPath, [script], cleanEnv({ AS_PORT: 'ninety', MCP_PORT: '1' }), root);
    expect((await proc.exited).code).toBe(1);
    expect(proc.output()).toMatch(/AS_PORT must be a port number/);
  });
});
