import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cliLogin, cliPath, useCliHome } from '../helpers/cli.js';
import { useDemoStack } from '../helpers/stack.js';

// The foundation flow through the `mcp-auth-kit` CLI: login prints the authorization URL,
// a headless user agent plays the browser, the CLI's loopback listener gets the callback.
describe('e2e: mcp-auth-kit CLI', () => {
  const stack = useDemoStack();
  const cli = useCliHome('mcp-auth-kit-cli-');

  it('login <mcp-url> completes through the loopback callback, then call whoami uses the stored token', async () => {
    const { authorizationUrl, callback, exitCode, stderr } = await cliLogin(stack.mcpUrl, cli.env);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(stack.mcpUrl);
    expect(callback.searchParams.get('iss')).toBe(stack.issuer);
    expect(exitCode, stderr).toBe(0);

    const run = promisify(execFile);
    const status = await run(process.execPath, [cliPath, 'status', '--json'], { env: cli.env });
    expect(status.stdout).toContain(stack.mcpUrl);
    expect(status.stdout).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./); // no token printed

    const whoami = await run(process.execPath, [cliPath, 'call', stack.mcpUrl, 'whoami'], { env: cli.env });
    expect(whoami.stdout).toContain('notes:read');
  });
});
