import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpAuthClient, MemoryStore, type McpAuthEvent } from '@mcp-auth-kit/client';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliLogin } from '../helpers/cli.js';
import { runCli } from '../helpers/cli-process.js';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';
import { isLoopbackCallback } from '../helpers/loopback.js';

/**
 * Issue 46 item 3: a loopback redirect on a shared host can be raced by another local user who
 * delivers a code of their own account first (RFC 8252 §8.3, §8.9). The client cannot prevent
 * it, so it shows who signed in: the CLI prints the account (`sub`, and the name when the AS
 * gives one: OpenID Connect Core §5.1 `name` in the ID Token when `openid profile` is granted),
 * and the library reports it in the login result and the `authorized` event. Against our AS and
 * the demo MCP server on loopback; the demo MCP server's `whoami` says independently whose token it got.
 */
describe('e2e: which account signed in', () => {
  let stack: DemoStack;
  const homes: string[] = [];
  beforeAll(async () => {
    stack = await startDemoStack();
  });
  afterAll(async () => {
    await stack?.close();
    for (const h of homes) await rm(h, { recursive: true, force: true });
  });

  const homeEnv = async (): Promise<NodeJS.ProcessEnv> => {
    const home = await mkdtemp(join(tmpdir(), 'mak-account-'));
    homes.push(home);
    return { ...process.env, MCP_AUTH_KIT_HOME: home, CI: 'true' };
  };

  async function whoami(env: NodeJS.ProcessEnv): Promise<string> {
    const run = await runCli(['call', stack.mcpUrl, 'whoami'], env);
    expect(run.code, run.stderr).toBe(0);
    return (JSON.parse(run.stdout) as { structuredContent: { sub: string } }).structuredContent.sub;
  }

  it('CLI login prints the account the access token is for (its sub, which the MCP server sees too)', async () => {
    const env = await homeEnv();
    const login = await cliLogin(stack.mcpUrl, env);
    expect(login.exitCode, login.stderr).toBe(0);
    const sub = /Signed in at localhost:\d+ as sub (\S+): if that is not your account, run `mcp-auth-kit logout /.exec(login.stdout)?.[1];
    expect(sub, login.stdout).toBeDefined();
    expect(login.stderr).toContain(`as sub ${sub}`);
    expect(await whoami(env)).toBe(sub);
  });

  it('CLI login with `openid profile` also prints the display name from the ID Token', async () => {
    const env = await homeEnv();
    const login = await cliLogin(stack.mcpUrl, env, undefined, undefined, ['--scope', 'openid profile notes:read']);
    expect(login.exitCode, login.stderr).toBe(0);
    const sub = /Signed in at localhost:\d+ as sub (\S+) \("Demo User"\): if that is not your account/.exec(login.stdout)?.[1];
    expect(sub, login.stdout).toBeDefined();
    expect(await whoami(env)).toBe(sub);
  });

  it('the library reports the account in the login result and in the `authorized` event', async () => {
    const events: McpAuthEvent[] = [];
    const client = new McpAuthClient({
      clientName: 'account test',
      store: new MemoryStore(),
      openAuthorizationUrl: async (url) => {
        await new HeadlessBrowser().followToCallback(url, isLoopbackCallback, { deliver: true });
      },
      onEvent: (e) => events.push(e),
    });
    const plain = await client.authorize(stack.mcpUrl);
    expect(plain.account).toEqual({ sub: expect.any(String), source: 'access_token' });
    const oidc = await client.authorize(stack.mcpUrl, { scope: 'openid profile notes:read' });
    expect(oidc.account).toEqual({ sub: plain.account!.sub, name: 'Demo User', source: 'id_token' });
    const authorized = events.filter((e) => e.type === 'authorized');
    expect(authorized.map((e) => e.account)).toEqual([plain.account, oidc.account]);
  });
});
