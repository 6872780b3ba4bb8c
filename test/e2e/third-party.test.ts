import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpAuthClient, MemoryStore, createAuthFetch, createUrlElicitation } from '@mcp-auth-kit/client';
import { completeUrlElicitation, type ThirdPartyProvider } from '@mcp-auth-kit/testing';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { cliPath } from '../helpers/cli.js';
import { AS_USER, DRIVE_USER, startDriveStack, type DriveStack } from '../helpers/drive-stack.js';
import type { DemoStack } from '../helpers/stack.js';
import { isLoopbackCallback } from '../helpers/loopback.js';

/**
 * Issue 41 end to end: the demo MCP server's `drive_list_files` needs the user's token at a third
 * party (the testing kit's drive). MCP 2025-11-25 client/elicitation, "URL Mode Elicitation for
 * OAuth Flows": the tool call answers with a URL elicitation of our AS's connect page; the page is
 * completed as the same user (our login, then the drive's consent); the retried call answers with
 * the user's drive files. Security best practices, "Token Passthrough": the drive never sees an
 * MCP access token.
 */
describe('e2e: third-party authorization (URL elicitation → connect → drive data)', () => {
  let drive: ThirdPartyProvider;
  let stack: DemoStack;
  let both: DriveStack;
  const mcpTokens: string[] = [];

  beforeAll(async () => {
    both = await startDriveStack();
    ({ stack, drive } = both);
  }, 60_000);
  afterAll(async () => both?.close());
  const disconnectAtDrive = () => both.disconnectAtDrive();

  const signedIn = () => {
    const ua = new HeadlessBrowser();
    return new McpAuthClient({
      clientName: 'e2e third party',
      store: new MemoryStore(),
      openAuthorizationUrl: async (url) => {
        await ua.followToCallback(url, isLoopbackCallback, { deliver: true });
      },
    });
  };

  it.each([
    { wire: '2025-11-25 (-32042, then retry)', options: {} },
    {
      wire: '2026-07-28 (InputRequiredResult, then retry with inputResponses)',
      options: { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    },
  ])('the SDK v2 client on $wire: elicitation → connect page as the same user → the tool answers with drive files', async ({ options }) => {
    await disconnectAtDrive();
    const auth = signedIn();
    const prompts: { host: string; url: string }[] = [];
    const elicitation = createUrlElicitation({
      onUrlElicitation: async ({ url, host }) => {
        prompts.push({ url: String(url), host });
        return 'accept';
      },
      // The "browser": the testing kit's driver signs in at our AS as the MCP token's user, then at the drive.
      openUrl: async (url) => {
        await completeUrlElicitation(String(url), { authServer: AS_USER, provider: DRIVE_USER });
      },
      waitForCompletion: async () => undefined,
    });
    const client = new Client({ name: 'e2e-third-party', version: '1.0.0' }, options as never);
    elicitation.attach(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { fetch: createAuthFetch(auth) }));
    try {
      const result = await elicitation.call(() => client.callTool({ name: 'drive_list_files', arguments: {} }));
      expect(JSON.stringify(result)).toContain('plan.md');
    } finally {
      await client.close();
    }
    const tokens = await auth.getTokens(stack.mcpUrl);
    if (tokens) mcpTokens.push(tokens.access_token);
    // One prompt, for our AS's connect page (never the drive's own URL).
    expect(prompts).toHaveLength(1);
    for (const p of prompts) {
      expect(new URL(p.url).origin).toBe(stack.issuer);
      expect(p.host).toBe(new URL(stack.issuer).host);
    }
  });

  it('the drive never received an MCP access token (no token passthrough)', () => {
    expect(mcpTokens.length).toBeGreaterThan(0);
    for (const token of mcpTokens) expect(drive.requestsContaining(token)).toEqual([]);
  });

  it('our CLI: the call asks for the connect page (no terminal: URL printed, exit 3), and after it is completed the call answers', async () => {
    const home = mkdtempSync(join(tmpdir(), 'e2e-3p-cli-'));
    const bin = join(home, 'bin');
    mkdirSync(bin);
    const fakeBrowser = fileURLToPath(new URL('../docs/fake-browser.mjs', import.meta.url));
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nexec "${process.execPath}" "${fakeBrowser}" "$@"\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const env = { ...process.env, MCP_AUTH_KIT_HOME: join(home, 'store'), PATH: `${bin}:${process.env.PATH}`, CI: '' };
    const cli = (...args: string[]) =>
      new Promise<{ code: number; out: string }>((resolve) => {
        const child = execFile(process.execPath, [cliPath, ...args], { env, timeout: 120_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
        );
        child.stdin?.end();
      });
    try {
      await disconnectAtDrive();
      expect((await cli('login', stack.mcpUrl)).code).toBe(0);
      const asked = await cli('call', stack.mcpUrl, 'drive_list_files');
      expect(asked.code, asked.out).toBe(3);
      expect(asked.out).toContain('Connect your Drive account to continue');
      const url = /^(http:\/\/localhost:\d+\/connect\/\S+)$/m.exec(asked.out)?.[1];
      expect(url, asked.out).toBeDefined();
      expect(new URL(url!).origin).toBe(stack.issuer);
      await completeUrlElicitation(url!, { authServer: AS_USER, provider: DRIVE_USER });
      const answered = await cli('call', stack.mcpUrl, 'drive_list_files');
      expect(answered.code).toBe(0);
      expect(answered.out).toContain('plan.md');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 240_000);
});
