import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliLogin, cliPath } from '../helpers/cli.js';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';

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
    const { authorizationUrl, callback, exitCode, stderr } = await cliLogin(stack.mcpUrl, env);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(stack.mcpUrl);
    expect(callback.searchParams.get('iss')).toBe(stack.issuer);
    expect(exitCode, stderr).toBe(0);

    const run = promisify(execFile);
    const status = await run(process.execPath, [cliPath, 'status', '--json'], { env });
    expect(status.stdout).toContain(stack.mcpUrl);
    expect(status.stdout).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./); // no token printed

    const whoami = await run(process.execPath, [cliPath, 'call', stack.mcpUrl, 'whoami'], { env });
    expect(whoami.stdout).toContain('notes:read');
  });
});
