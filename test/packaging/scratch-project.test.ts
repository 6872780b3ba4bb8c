/**
 * What a user does, outside this workspace (issue 20; README "Use it in your project"):
 * `npm pack` every published package, install the tarballs into two fresh projects under the OS
 * temp dir — express 4 + MCP SDK v1 and express 5 + MCP SDK v2 — with npm's cache (installed
 * once per run, both at the same time), then, in those projects with their own installs:
 *   (a)/(b) a server protected by the resource-server middleware, tested with the testing kit
 *           under vitest and under node:test;
 *   (c)     TypeScript nodenext with skipLibCheck: false over a file importing every package;
 *   (d)     the client library (SDK v1 client) and the CLI against the demo stack;
 * and what the install contains: real copies (no workspace links), the user's express only, no
 * storage driver and no CLI dependency unless asked for. The project templates are in
 * test/packaging/scratch/.
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliLogin } from '../helpers/cli.js';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';
import { startDriveStack, type DriveStack } from '../helpers/drive-stack.js';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const templates = join(here, 'scratch');
const PROJECTS = ['express4-sdk1', 'express5-sdk2'] as const;
type Project = (typeof PROJECTS)[number];

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
const rootManifest = readJson(join(root, 'package.json'));
const published = (rootManifest.workspaces as string[]).filter((ws) => !readJson(join(root, ws, 'package.json')).private);

// The user's shell, not ours: npm and vitest put their own variables (prefix, workspace,
// worker ids) into the environment of this process, and a nested npm or vitest would obey them.
const npmCli = process.env.npm_execpath?.endsWith('.js') ? [process.execPath, process.env.npm_execpath] : ['npm'];
const userEnv: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !/^(npm_|VITEST|NODE_OPTIONS$|TEST$|INIT_CWD$)/i.test(name) || /^npm_config_(cache|registry|userconfig)$/i.test(name),
  ),
);
userEnv.NO_COLOR = '1';

interface Run {
  code: number | null;
  output: string;
  seconds: number;
}

function run(command: string, args: string[], cwd: string, timeoutMs = 300_000, env = userEnv): Promise<Run> {
  const started = Date.now();
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolveRun({ code, output, seconds: (Date.now() - started) / 1000 });
    });
  });
}

const npm = (args: string[], cwd: string, timeoutMs?: number) => run(npmCli[0]!, [...npmCli.slice(1), ...args], cwd, timeoutMs);
const node = (args: string[], cwd: string, timeoutMs?: number) => run(process.execPath, args, cwd, timeoutMs);
const tail = (text: string) => text.slice(-6000);

let scratch: string;
const dirs = {} as Record<Project, string>;
const timings: string[] = [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-scratch-'));
  const tarballs = join(scratch, 'tarballs');
  mkdirSync(tarballs);

  // 1. npm pack, as for publishing (prepack builds each package)
  const pack = await npm(['pack', '--json', '--pack-destination', tarballs, ...published.flatMap((ws) => ['-w', ws])], root);
  expect(pack.code, tail(pack.output)).toBe(0);
  timings.push(`pack ${pack.seconds.toFixed(1)} s`);
  const files = new Map<string, string>();
  for (const entry of JSON.parse(pack.output.slice(pack.output.indexOf('['), pack.output.lastIndexOf(']') + 1)) as Array<{
    name: string;
    filename: string;
  }>) {
    files.set(entry.name, entry.filename);
  }
  expect([...files.keys()].sort()).toEqual(published.map((ws) => readJson(join(root, ws, 'package.json')).name).sort());

  // 2. the projects: template files, tarballs instead of registry versions for our packages
  for (const project of PROJECTS) {
    const dir = join(scratch, project);
    cpSync(join(templates, 'shared'), dir, { recursive: true });
    cpSync(join(templates, project), dir, { recursive: true });
    const manifest = readJson(join(dir, 'package.json'));
    for (const field of ['dependencies', 'devDependencies']) {
      for (const [name, spec] of Object.entries(manifest[field] as Record<string, string>)) {
        if (spec === '<tarball>') manifest[field][name] = `file:../tarballs/${files.get(name)}`;
      }
    }
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    dirs[project] = dir;
  }

  // 3. npm install in both at once, from npm's cache where it can
  const installs = await Promise.all(
    PROJECTS.map((project) => npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dirs[project], 600_000)),
  );
  installs.forEach((install, i) => {
    expect(install.code, `${PROJECTS[i]}: npm install\n${tail(install.output)}`).toBe(0);
    timings.push(`install ${PROJECTS[i]} ${install.seconds.toFixed(1)} s`);
  });
}, 900_000);

afterAll(() => {
  console.log(`scratch projects (${scratch}): ${timings.join(', ')}`);
  if (scratch && !process.env.KEEP_SCRATCH) rmSync(scratch, { recursive: true, force: true });
});

const installed = (project: Project, pkg: string) => join(dirs[project], 'node_modules', pkg);
const versionOf = (project: Project, pkg: string) => readJson(join(installed(project, pkg), 'package.json')).version as string;

describe('the install: what a user gets from the tarballs', () => {
  it('our packages are real copies from the tarballs (no links into the workspace)', () => {
    for (const project of PROJECTS) {
      const scope = installed(project, '@mcp-auth-kit');
      for (const name of readdirSync(scope)) {
        const dir = join(scope, name);
        expect(lstatSync(dir).isSymbolicLink(), `${project}: @mcp-auth-kit/${name} is a link`).toBe(false);
        expect(realpathSync(dir).startsWith(root + sep), `${project}: @mcp-auth-kit/${name} resolves into the workspace`).toBe(false);
        expect(existsSync(join(dir, 'dist', '.tsbuildinfo')), `${name} ships build info`).toBe(false);
        expect(existsSync(join(dir, 'LICENSE')), `${name} ships no LICENSE`).toBe(true);
      }
    }
  });

  it("express is a peer: the user's express 4 or 5 is the only copy our packages use", () => {
    expect(versionOf('express4-sdk1', 'express')).toMatch(/^4\./);
    expect(versionOf('express5-sdk2', 'express')).toMatch(/^5\./);
    for (const project of PROJECTS) {
      for (const pkg of ['authorization-server', 'resource-server', 'testing']) {
        expect(
          existsSync(join(installed(project, `@mcp-auth-kit/${pkg}`), 'node_modules', 'express')),
          `${project}: ${pkg} has its own express`,
        ).toBe(false);
      }
    }
  });

  it('storage drivers and the CLI dependencies are not installed unless asked for', () => {
    for (const project of PROJECTS) {
      expect(existsSync(installed(project, 'better-sqlite3')), `${project}: better-sqlite3 installed`).toBe(false);
      expect(existsSync(installed(project, 'pg')), `${project}: pg installed`).toBe(false);
    }
    // express4-sdk1 depends on @mcp-auth-kit/client (the library) only; express5-sdk2 on the CLI
    expect(existsSync(installed('express4-sdk1', 'commander'))).toBe(false);
    expect(existsSync(installed('express4-sdk1', '@modelcontextprotocol/client'))).toBe(false);
    expect(existsSync(installed('express5-sdk2', 'commander'))).toBe(true);
    expect(existsSync(installed('express5-sdk2', '@modelcontextprotocol/client'))).toBe(true);
  });

  it('the default SQLite store needs no driver on Node ≥ 22.13 (node:sqlite); a missing driver names the package to install', async () => {
    const result = await node(['drivers.mjs'], dirs['express4-sdk1']);
    expect(result.code, result.output).toBe(0);
    const lines = result.output
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    const builtinSqlite = major > 22 || (major === 22 && minor >= 13);
    expect(lines).toEqual([
      builtinSqlite
        ? expect.objectContaining({ kind: 'sqlite', opened: true })
        : expect.objectContaining({
            kind: 'sqlite',
            name: 'StorageError',
            code: 'unavailable',
            message: expect.stringMatching(/Node\.js 22\.13.*npm install better-sqlite3/),
          }),
      expect.objectContaining({
        kind: 'sqlite',
        driver: 'better-sqlite3',
        name: 'StorageError',
        code: 'unavailable',
        message: expect.stringContaining('npm install better-sqlite3'),
      }),
      expect.objectContaining({
        kind: 'postgres',
        name: 'StorageError',
        code: 'unavailable',
        message: expect.stringContaining('npm install pg'),
      }),
    ]);
  });
});

// oidc-provider 9 warns on every start outside Node's LTS lines from 22 on; on a supported
// runtime the user's test output must not carry that line.
const supportedRuntime = Number(process.versions.node.split('.')[0]) >= 22 && Boolean(process.release.lts);

// express4-sdk1 under vitest and node:test: the authorized tool calls need the testing kit's
// wire negotiation (2026-07-28 first, then initialize on 2025-11-25), which an SDK v1 server
// requires; it comes from branch testing-kit. Without it those two cases fail with
// "expected the request to be authorized, got HTTP 400" (SDK v1: unsupported protocol version).
describe.each(PROJECTS)('%s: the server protected by the middleware, tested with the testing kit', (project) => {
  it("under vitest (the project's own vitest)", async () => {
    const result = await node(['node_modules/vitest/vitest.mjs', 'run', '--reporter=verbose'], dirs[project]);
    expect(result.code, tail(result.output)).toBe(0);
    expect(result.output).toMatch(/Tests\s+4 passed \(4\)/);
    if (supportedRuntime) expect(result.output).not.toContain('Unsupported runtime');
    timings.push(`${project} vitest ${result.seconds.toFixed(1)} s`);
  }, 180_000);

  it('under node:test', async () => {
    const result = await node(['--test', '--test-reporter=tap', 'server.node-test.mjs'], dirs[project]);
    expect(result.code, tail(result.output)).toBe(0);
    expect(result.output).toMatch(/^# pass 4$/m);
    expect(result.output).toMatch(/^# fail 0$/m);
    if (supportedRuntime) expect(result.output).not.toContain('Unsupported runtime');
    timings.push(`${project} node:test ${result.seconds.toFixed(1)} s`);
  }, 180_000);

  it('TypeScript nodenext with skipLibCheck: false type-checks a file importing every package', async () => {
    const result = await node(['node_modules/typescript/bin/tsc', '-p', '.'], dirs[project]);
    expect(result.code, tail(result.output)).toBe(0);
    timings.push(`${project} tsc ${result.seconds.toFixed(1)} s`);
  }, 180_000);
});

describe('the client side, installed from the tarballs, against the demo stack', () => {
  let stack: DemoStack;
  beforeAll(async () => {
    stack = await startDemoStack();
  });
  afterAll(() => stack?.close());

  it('client library + MCP SDK v1 client: login, whoami, then step-up for add_note', async () => {
    const child = spawn(process.execPath, ['client-demo.mjs', stack.mcpUrl], {
      cwd: dirs['express4-sdk1'],
      env: userEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const browsing: Promise<URL>[] = [];
    const callback = (url: URL) => url.hostname === '127.0.0.1' && url.pathname === '/callback';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      const before = stdout.split('\n').length - 1;
      stdout += chunk.toString();
      // each complete AUTHORIZE line is a browser the user opens
      for (const line of stdout.split('\n').slice(before, -1)) {
        if (line.startsWith('AUTHORIZE '))
          browsing.push(new HeadlessBrowser().followToCallback(line.slice(10), callback, { deliver: true }));
      }
    });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    const callbacks = await Promise.all(browsing);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    // one authorization for notes:read, one step-up for notes:write (MCP §Scope Challenge Handling)
    expect(callbacks).toHaveLength(2);
    for (const url of callbacks) expect(url.searchParams.get('iss')).toBe(stack.issuer);
    const whoami = JSON.parse(/^WHOAMI (.*)$/m.exec(stdout)![1]!) as { sub: string; client_id: string; scopes: string[] };
    expect(whoami).toMatchObject({ sub: expect.any(String), client_id: expect.any(String) });
    expect(whoami.scopes).toContain('notes:read');
    expect(JSON.parse(/^ADD_NOTE (.*)$/m.exec(stdout)![1]!)).toMatchObject({ note: { text: 'from the scratch project' } });
  }, 120_000);

  it('the mcp-auth-kit command of @mcp-auth-kit/cli: login, then call whoami', async () => {
    const bin = join(installed('express5-sdk2', '@mcp-auth-kit/cli'), 'bin', 'mcp-auth-kit.js');
    const home = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-scratch-cli-'));
    try {
      const env = { ...userEnv, MCP_AUTH_KIT_HOME: home, CI: 'true' };
      const login = await cliLogin(stack.mcpUrl, env, undefined, bin);
      expect(login.exitCode, login.stderr).toBe(0);
      const whoami = await run(process.execPath, [bin, 'call', stack.mcpUrl, 'whoami'], dirs['express5-sdk2'], 60_000, env);
      expect(whoami.code, whoami.output).toBe(0);
      expect(whoami.output).toContain('notes:read');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('third-party authorization from the scratch project (issue 41)', () => {
  let both: DriveStack;
  beforeAll(async () => {
    both = await startDriveStack();
  }, 60_000);
  afterAll(() => both?.close());

  it("the installed CLI meets a URL elicitation, the installed testing kit's driver completes it, the call answers with drive files", async () => {
    const { stack } = both;
    const bin = join(installed('express5-sdk2', '@mcp-auth-kit/cli'), 'bin', 'mcp-auth-kit.js');
    const home = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-scratch-drive-'));
    try {
      const env = { ...userEnv, MCP_AUTH_KIT_HOME: home, CI: 'true' };
      const login = await cliLogin(stack.mcpUrl, env, undefined, bin);
      expect(login.exitCode, login.stderr).toBe(0);
      const asked = await run(process.execPath, [bin, 'call', stack.mcpUrl, 'drive_list_files'], dirs['express5-sdk2'], 60_000, env);
      expect(asked.code, asked.output).toBe(3);
      const url = /^(http:\/\/localhost:\d+\/connect\/\S+)$/m.exec(asked.output)?.[1];
      expect(url, asked.output).toBeDefined();
      const connect = await node(['drive-connect.mjs', url!], dirs['express5-sdk2'], 60_000);
      expect(connect.output, connect.output).toContain('CONNECTED');
      const answered = await run(process.execPath, [bin, 'call', stack.mcpUrl, 'drive_list_files'], dirs['express5-sdk2'], 60_000, env);
      expect(answered.code, answered.output).toBe(0);
      expect(answered.output).toContain('plan.md');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 180_000);
});
