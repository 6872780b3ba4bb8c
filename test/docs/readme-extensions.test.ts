import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcp-auth-kit/test-utils';
import { cliPath } from '../helpers/cli.js';
import { startFakeIdp, type FakeIdp } from '../../packages/client/test/helpers/fake-idp.js';
import { fakeBrowserBin, markedBlocks, runShell, shellCommands, userTerminalEnv } from './readme-blocks.js';

/**
 * The root README's "Machine clients and an enterprise IdP" section, run as written (issue 42):
 * `npm start` with the config file (`<!-- docs-test: extensions-config -->`) and the `ID_JAG_*`
 * variables its `npm start` line sets, then the CLI's machine and enterprise logins
 * (`<!-- docs-test: extensions -->`).
 *
 * What differs from a user's terminal, and why:
 * - `npm start` is `scripts/start.mjs` (what it runs after its build: the suite runs built), on
 *   free ports (AS_PORT, MCP_PORT, DEMO_DRIVE_PORT, as the README says they move the URLs), with
 *   its data in a scratch DATA_DIR and the config file's absolute path.
 * - The enterprise IdP (`http://localhost:8000` in the README) is a test IdP on loopback that
 *   signs the user in at once (OIDC code flow with PKCE) and issues signed ID-JAGs; the browser is
 *   test/docs/fake-browser.mjs as `xdg-open`, as in readme-demo.test.ts.
 * - `npx mcp-auth-kit` runs the workspace CLI's bin (readme-demo.test.ts checks it is what npx runs).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const blocks = markedBlocks(root).filter((b) => b.file === 'README.md');
const config = blocks.find((b) => b.kind === 'extensions-config');
const [startBlock, cliBlock] = blocks.filter((b) => b.kind === 'extensions');
const scratch = mkdtempSync(join(tmpdir(), 'readme-ext-'));

const CONTRACT = { mcp: 'http://localhost:3000', as: 'http://localhost:9000', idp: 'http://localhost:8000' };
const IDP_CLIENT = { id: 'mcp-cli', secret: 'the-cli-secret-at-your-idp' };

let idp: FakeIdp;
let stack: ChildProcess | undefined;
let stackLog = '';
let ports: { as: number; mcp: number; drive: number };

function withPorts(text: string): string {
  return text
    .replaceAll(CONTRACT.mcp, `http://localhost:${ports.mcp}`)
    .replaceAll(CONTRACT.as, `http://localhost:${ports.as}`)
    .replaceAll(CONTRACT.idp, idp.issuer);
}

/** `A=1 B=2 npm start` → { A: '1', B: '2' } (values as written, then the ports applied). */
function startAssignments(line: string): Record<string, string> {
  const words = line.split(/\s+/);
  expect(words.slice(-2)).toEqual(['npm', 'start']);
  return Object.fromEntries(words.slice(0, -2).map((w) => [w.slice(0, w.indexOf('=')), withPorts(w.slice(w.indexOf('=') + 1))]));
}

beforeAll(async () => {
  ports = { as: await freePort(), mcp: await freePort(), drive: await freePort() };
  idp = await startFakeIdp('alice@corp.example', 'mcp-cli', IDP_CLIENT);
  const configFile = join(scratch, 'machine-clients.yaml');
  writeFileSync(configFile, config!.code);
  const assigned = startAssignments(shellCommands(startBlock!.code)[0]!);
  expect(Object.keys(assigned).sort()).toEqual(['AS_CONFIG_FILE', 'ID_JAG_CLIENTS', 'ID_JAG_ISSUER', 'ID_JAG_JWKS_URI']);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...assigned,
    AS_CONFIG_FILE: configFile,
    AS_PORT: String(ports.as),
    MCP_PORT: String(ports.mcp),
    DEMO_DRIVE_PORT: String(ports.drive),
    DATA_DIR: join(scratch, 'data'),
  };
  for (const key of ['DEV_AUTO_LOGIN', 'DATABASE_URL', 'REDIS_URL', 'npm_lifecycle_event']) delete env[key];
  stack = spawn(process.execPath, ['scripts/start.mjs'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not get ready:\n${stackLog}`)), 90_000);
    const seen = (d: Buffer) => {
      stackLog += d.toString();
      if (/\[start\] ready/.test(stackLog)) {
        clearTimeout(timer);
        resolve();
      }
    };
    stack!.stdout!.on('data', seen);
    stack!.stderr!.on('data', seen);
    stack!.on('exit', (code) => reject(new Error(`npm start exited (${code}):\n${stackLog}`)));
  });
}, 120_000);

afterAll(async () => {
  if (stack && stack.exitCode === null) {
    const exited = new Promise((r) => stack!.once('exit', r));
    stack.kill('SIGINT');
    await exited;
  }
  await idp?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('README: machine clients and an enterprise IdP with npm start', () => {
  it('the section has its config file, its npm start line and its CLI commands', () => {
    expect(config?.lang).toBe('yaml');
    expect(shellCommands(startBlock!.code)).toHaveLength(1);
    const commands = shellCommands(cliBlock!.code);
    expect(commands.some((c) => c.includes('login --client-credentials'))).toBe(true);
    expect(commands.some((c) => c.includes('login --enterprise'))).toBe(true);
  });

  it('every CLI command runs as written and exits 0; the enterprise login went through the IdP', { timeout: 180_000 }, async () => {
    const home = mkdtempSync(join(scratch, 'home-'));
    const bin = join(home, 'bin');
    fakeBrowserBin(root, bin);
    const env = userTerminalEnv(bin, home);
    // the block exports these secrets itself: a value left in the caller's environment must not stand in
    for (const key of ['MCP_AUTH_KIT_CLIENT_SECRET', 'MCP_AUTH_KIT_IDP_CLIENT_SECRET']) delete env[key];
    const script = shellCommands(cliBlock!.code)
      .map((c) => withPorts(c).replace(/^npx mcp-auth-kit(?=\s)/, `"${process.execPath}" "${cliPath}"`))
      .join('\n');
    const r = await runShell(script, { cwd: root, env, timeoutMs: 120_000, exitOnError: true });
    let browser = '';
    try {
      browser = readFileSync(join(home, 'browser.log'), 'utf8');
    } catch {
      // no browser was opened
    }
    expect(r.code, `${r.output}\nbrowser:\n${browser}\nnpm start:\n${stackLog}`).toBe(0);
    const mcp = `http://localhost:${ports.mcp}/mcp`;
    expect(r.output).toContain(`Logged in to ${mcp} via http://localhost:${ports.as}`);
    expect(r.output).toContain('"text"'); // whoami answered
    // the enterprise login: the IdP's sign-in page, then its token endpoint twice (code, ID-JAG exchange)
    expect(browser).toContain(`GET ${idp.issuer}/authorize`);
    expect(idp.tokenRequests.map((t) => t.body.get('grant_type'))).toEqual([
      'authorization_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]);
    expect(r.output).toMatch(/check: +valid: the MCP server accepted the access token \(HTTP 200\) over MCP 2026-07-28/);
  });
});
