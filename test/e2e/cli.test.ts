import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';
import { HeadlessUserAgent } from '../helpers/user-agent.js';

const require = createRequire(import.meta.url);
const cli = join(dirname(require.resolve('@mcp-auth-kit/client/package.json')), 'bin/mcp-auth-kit.js');
const isLoopbackCallback = (url: URL) => url.hostname === '127.0.0.1' && url.pathname === '/callback';

// The foundation flow through the `mcp-auth-kit` CLI: login prints the authorization URL,
// a headless user agent plays the browser, the CLI's loopback listener gets the callback.
describe('e2e: mcp-auth-kit CLI', () => {
  let stack: DemoStack;
  let home: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    stack = await startDemoStack();
    home = await mkdtemp(join(tmpdir(), 'mcp-auth-kit-cli-'));
    env = { ...process.env, MCP_AUTH_KIT_HOME: home, CI: 'true' };
  });
  afterAll(async () => {
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('login <mcp-url> completes through the loopback callback, then call whoami uses the stored token', async () => {
    const login = spawn(process.execPath, [cli, '--no-browser', 'login', stack.mcpUrl], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const authorizationUrl = await new Promise<URL>((resolve, reject) => {
      login.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /(http:\/\/localhost:\d+\/\S*auth\S*)/.exec(stderr);
        if (match) resolve(new URL(match[1]!));
      });
      login.on('exit', (code) => reject(new Error(`login exited (${code}) before printing a URL: ${stderr}`)));
    });
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(stack.mcpUrl);

    const callback = await new HeadlessUserAgent().follow(authorizationUrl, isLoopbackCallback, { deliver: true });
    expect(callback.searchParams.get('iss')).toBe(stack.issuer);
    const exitCode = await new Promise<number | null>((resolve) => login.on('exit', resolve));
    expect(exitCode, stderr).toBe(0);

    const run = promisify(execFile);
    const status = await run(process.execPath, [cli, 'status', '--json'], { env });
    expect(status.stdout).toContain(stack.mcpUrl);
    expect(status.stdout).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./); // no token printed

    const whoami = await run(process.execPath, [cli, 'call', stack.mcpUrl, 'whoami'], { env });
    expect(whoami.stdout).toContain('notes:read');
  });
});
