import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliPath } from '../helpers/cli.js';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import {
  fakeBrowserBin,
  fencedBlocks,
  markedBlocks,
  readmeFiles,
  runShell,
  shellCommands,
  userTerminalEnv,
  type MarkedBlock,
} from './readme-blocks.js';

/**
 * "Every command in every README runs as written against `npm start`": the README blocks marked
 * `<!-- docs-test: demo -->` run against the demo stack on loopback, those marked
 * `<!-- docs-test: admin -->` run the admin tool on a fresh store (see readme-blocks.ts).
 *
 * What differs from a user's terminal, and why:
 * - Ports: the stack runs on free ports, so the runtime contract's URLs become the ones the
 *   READMEs say AS_PORT / MCP_PORT give (`http://localhost:$MCP_PORT/mcp`, issuer
 *   `http://localhost:$AS_PORT`).
 * - The browser: `xdg-open` on PATH is test/docs/fake-browser.mjs, and the stack runs with
 *   DEV_AUTO_LOGIN=demo (the runtime contract's switch for CI), so no page needs a click.
 * - `npx mcp-auth-kit`: runs the file npx would (the workspace's `mcp-auth-kit` bin, checked
 *   against the lockfile below), never the registry.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const blocks = markedBlocks(root);
const scratch = mkdtempSync(join(tmpdir(), 'readme-docs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const CONTRACT_MCP = 'http://localhost:3000';
const CONTRACT_AS = 'http://localhost:9000';

function withPorts(text: string, stack: DemoStack): string {
  return text.replaceAll(CONTRACT_MCP, new URL(stack.mcpUrl).origin).replaceAll(CONTRACT_AS, stack.issuer);
}

const label = (b: MarkedBlock) => `${b.file}:${b.line} (${b.lang})`;

/** A shell command, awaited without blocking this process (the demo stack runs in it). */
const sh = (command: string, env: NodeJS.ProcessEnv) => runShell(command, { cwd: root, env, timeoutMs: 60_000 });

describe('README blocks: marked, and every demo command is marked', () => {
  it('the blocks the quick starts rely on are marked (a removed marker would silently skip them)', () => {
    const where = blocks.map((b) => `${b.file} ${b.kind} ${b.lang}`);
    expect(where).toEqual(
      expect.arrayContaining(['README.md demo sh', 'packages/client/README.md demo ts', 'apps/auth-server/README.md admin sh']),
    );
  });

  it('every shell block that talks to the demo stack (localhost:3000 / :9000, the mcp-auth-kit command) is marked', () => {
    const unmarked: string[] = [];
    for (const file of readmeFiles(root)) {
      for (const block of fencedBlocks(readFileSync(join(root, file), 'utf8'))) {
        if (block.marker || !['sh', 'bash', 'shell'].includes(block.lang)) continue;
        const commands = shellCommands(block.code).filter(
          (c) => !c.startsWith('npm ') && !/^npx @mcp-auth-kit\/cli .*example\.com/.test(c),
        );
        if (commands.some((c) => c.includes(CONTRACT_MCP) || c.includes(CONTRACT_AS) || /(^|\s)mcp-auth-kit\s/.test(c))) {
          unmarked.push(`${file}:${block.line}`);
        }
      }
    }
    expect(unmarked).toEqual([]);
  });

  it('`npx mcp-auth-kit` in this repository runs the workspace CLI (the lockfile links the bin to packages/cli)', () => {
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { link?: boolean; resolved?: string; bin?: Record<string, string> }>;
    };
    expect(lock.packages['node_modules/@mcp-auth-kit/cli']).toMatchObject({ link: true, resolved: 'packages/cli' });
    expect(lock.packages['packages/cli']?.bin).toEqual({ 'mcp-auth-kit': 'bin/mcp-auth-kit.js' });
    expect(cliPath).toBe(join(root, 'packages/cli/bin/mcp-auth-kit.js'));
  });
});

describe('README blocks against the demo stack', () => {
  let stack: DemoStack;
  let bin: string;
  beforeAll(async () => {
    stack = await startDemoStack({ devAutoLogin: 'demo' });
    bin = join(scratch, 'bin');
    fakeBrowserBin(root, bin);
  });
  afterAll(async () => stack?.close());

  for (const block of blocks.filter((b) => b.kind === 'demo' && ['sh', 'bash', 'shell'].includes(b.lang))) {
    it(`${label(block)}: every command exits 0`, { timeout: 180_000 }, async () => {
      const home = mkdtempSync(join(scratch, 'home-'));
      const env = userTerminalEnv(bin, home);
      for (const written of shellCommands(block.code)) {
        const command = withPorts(written, stack).replace(/^npx mcp-auth-kit(?=\s)/, `"${process.execPath}" "${cliPath}"`);
        const r = await sh(command, env);
        let browser = '';
        try {
          browser = readFileSync(join(home, 'browser.log'), 'utf8');
        } catch {
          // the browser was not needed
        }
        expect(r.code, `${written}\n${r.output}\nbrowser:\n${browser}`).toBe(0);
      }
    });
  }

  for (const block of blocks.filter((b) => b.kind === 'demo' && ['ts', 'typescript'].includes(b.lang))) {
    it(`${label(block)}: runs as a module and reaches the demo server`, async () => {
      // What the snippet leaves to the reader: an MCP request to send with `auth.fetch`.
      const prelude = [
        "const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };",
        "const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'docs-test', version: '0' } } });",
      ].join('\n');
      const file = join(root, 'test/docs', `generated-${process.pid}-${block.line}.ts`);
      writeFileSync(
        file,
        `// generated from ${label(block)}\n${prelude}\n${withPorts(block.code, stack)}\nexport { auth, res, client };\n`,
      );
      // The snippet's openAuthorizationUrl prints the URL; the user opens it: so does this test.
      const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
        if (args[0] === 'Open' && typeof args[1] === 'string') {
          void new HeadlessBrowser().followToCallback(args[1], (u) => u.hostname === '127.0.0.1' && u.pathname === '/callback', {
            deliver: true,
          });
        }
      });
      try {
        const mod = (await import(/* @vite-ignore */ file)) as {
          res: Response;
          client: { listTools(): Promise<{ tools: { name: string }[] }>; close(): Promise<void> };
        };
        expect(mod.res.status).toBe(200);
        expect((await mod.client.listTools()).tools.map((t) => t.name)).toContain('whoami');
        await mod.client.close();
      } finally {
        log.mockRestore();
        rmSync(file, { force: true });
      }
    });
  }
});

describe('README admin blocks on a fresh store (what `npm start` uses: DATA_DIR)', () => {
  for (const block of blocks.filter((b) => b.kind === 'admin')) {
    it(`${label(block)}: every command is understood and runs`, { timeout: 240_000 }, () => {
      const dataDir = mkdtempSync(join(scratch, 'data-'));
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, NEW_PASSWORD: 'docs-test-password' };
      for (const key of ['DATABASE_URL', 'AS_CONFIG_FILE', 'AS_ADMIN_PASSWORD']) delete env[key];
      for (const written of shellCommands(block.code)) {
        // A placeholder (`<client_id>`) stands for a value from an earlier command's output; with
        // none on a fresh store, the command must still be understood: no usage error.
        const placeholder = /<[a-z_]+>/.test(written);
        const command = written.replace(/<([a-z_]+)>/g, 'docs-example-$1');
        const r = spawnSync('/bin/sh', ['-c', command], {
          cwd: root,
          env,
          encoding: 'utf8',
          input: 'docs-test-password\n', // the first line of stdin, as a script would pipe it
          timeout: 60_000,
        });
        const detail = `${written}\n${r.stdout}\n${r.stderr}`;
        if (placeholder) {
          expect(r.stderr, detail).toContain('docs-example-');
          expect(r.stderr, detail).not.toMatch(/^usage:/m);
        } else {
          expect(r.status, detail).toBe(0);
        }
      }
    });
  }
});
