import { readFileSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliLogin } from '../helpers/cli.js';
import { runCli } from '../helpers/cli-process.js';
import { freePort } from '@mcp-auth-kit/test-utils';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';

/**
 * Issue 22 (the first hour): every message of the `mcp-auth-kit` CLI says what happened and what
 * to do. Each test runs the CLI as a process against loopback servers: the demo stack, a port
 * nobody listens on (a server that is down), or a small server answering 404.
 */
describe('e2e: mcp-auth-kit CLI messages', () => {
  let stack: DemoStack;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const servers: Server[] = [];

  beforeAll(async () => {
    stack = await startDemoStack();
    home = await mkdtemp(join(tmpdir(), 'mcp-auth-kit-cli-messages-'));
    env = { ...process.env, MCP_AUTH_KIT_HOME: home, CI: 'true' };
  });
  afterAll(async () => {
    for (const s of servers) await new Promise((r) => s.close(r));
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  /** A loopback HTTP server with one handler; its origin. */
  async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    return `http://127.0.0.1:${port}`;
  }

  const homeEnv = async (extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> => ({
    ...env,
    MCP_AUTH_KIT_HOME: await mkdtemp(join(tmpdir(), 'mcp-auth-kit-cli-home-')),
    ...extra,
  });

  /** Rewrites the stored token record of the demo server (the file store's JSON). */
  function editTokens(dir: string, edit: (tokens: Record<string, unknown>) => void) {
    const path = join(dir, 'store.json');
    const data = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    const visit = (v: unknown) => {
      if (!v || typeof v !== 'object') return;
      if ('access_token' in v) edit(v as Record<string, unknown>);
      else for (const child of Object.values(v)) visit(child);
    };
    visit(data);
    writeFileSync(path, JSON.stringify(data));
  }

  it('--version prints the version of the installed package (read from its package.json)', async () => {
    const require = createRequire(import.meta.url);
    const { version } = require('@mcp-auth-kit/cli/package.json') as { version: string };
    expect((require('@mcp-auth-kit/client/package.json') as { version: string }).version).toBe(version);
    const run = await runCli(['--version'], env);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(version);
  });

  it("call --help describes each of call's arguments and shows an example", async () => {
    const run = await runCli(['call', '--help'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/mcp-url\s+the MCP endpoint URL/);
    expect(run.stdout).toMatch(/tool\s+the tool name/);
    expect(run.stdout).toMatch(/json\s+the tool's arguments as a JSON object/);
    expect(run.stdout).toContain(`add_note '{"text":"hello"}'`);
  });

  it('a server that is down (nobody listens on the port) is reported as not answering, not as missing metadata', async () => {
    const url = `http://127.0.0.1:${await freePort()}/mcp`;
    for (const args of [
      ['login', url],
      ['tools', url],
    ]) {
      const run = await runCli(args, await homeEnv());
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`the MCP server at ${url} did not answer (connection refused)`);
      expect(run.stderr).toContain('Check that the server is running');
      expect(run.stderr).not.toContain('no protected resource metadata');
    }
  });

  it('RFC 9728 §3: a server that answers 404 for its metadata is told apart from one that is down', async () => {
    const origin = await serve((_req, res) => res.writeHead(404).end('not found'));
    const run = await runCli(['login', `${origin}/mcp`], await homeEnv());
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the MCP server at ${origin}/mcp answered, but publishes no protected resource metadata (RFC 9728)`);
    expect(run.stderr).toContain(`HTTP 404 from ${origin}/.well-known/oauth-protected-resource/mcp`);
    expect(run.stderr).toContain('it must be the MCP endpoint itself');
    expect(run.stderr).not.toContain('did not answer');
  });

  it('an authorization server that is down is named as the one that did not answer', async () => {
    const issuer = `http://127.0.0.1:${await freePort()}`;
    const origin = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          resource: `http://127.0.0.1:${(servers.at(-1)!.address() as { port: number }).port}/mcp`,
          authorization_servers: [issuer],
        }),
      );
    });
    const run = await runCli(['login', `${origin}/mcp`], await homeEnv());
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the authorization server at ${issuer} did not answer (connection refused)`);
    expect(run.stderr).toContain('check that it is running');
  });

  it('invalid JSON arguments say where the JSON is wrong and give an example; a non-object says what it was', async () => {
    const bad = await runCli(['call', stack.mcpUrl, 'add_note', '{text: "hi"}'], await homeEnv());
    expect(bad.code).toBe(1);
    // our prefix, V8's own parse message (its wording differs between Node versions), and the
    // excerpt we cut at the position V8 reports
    expect(bad.stderr).toMatch(/the tool arguments are not valid JSON: .+ \(here: "text: \\"hi\\"}"\)/);
    expect(bad.stderr).toContain(`e.g. mcp-auth-kit call <mcp-url> <tool> '{"text":"hello"}'`);
    const array = await runCli(['call', stack.mcpUrl, 'add_note', '["hi"]'], await homeEnv());
    expect(array.stderr).toContain('the tool arguments must be a JSON object, not an array');
  });

  it('RFC 6749 §4.1.2.1: Deny in the browser is reported as the user denying access, with what to do', async () => {
    const e = await homeEnv();
    let delivered = false;
    const run = await runCli(['--no-browser', 'login', stack.mcpUrl], e, {
      onStderr: (text) => {
        const match = /(http:\/\/localhost:\d+\/\S*auth\S*)/.exec(text);
        if (!match || delivered) return;
        delivered = true;
        // What the AS sends back after Deny: error=access_denied with state and iss (RFC 9207).
        const auth = new URL(match[1]!);
        const callback = new URL(auth.searchParams.get('redirect_uri')!);
        callback.search = new URLSearchParams({
          error: 'access_denied',
          error_description: 'End-User aborted interaction',
          state: auth.searchParams.get('state')!,
          iss: stack.issuer,
        }).toString();
        void fetch(callback).then((r) => r.arrayBuffer());
      },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: you denied access in the browser (access_denied)');
    expect(run.stderr).toContain(`run \`mcp-auth-kit login ${stack.mcpUrl}\` again and choose Allow`);
    expect(run.stderr).not.toContain('authorization server refused');
  });

  it('when no browser can be opened, the CLI says so and that the printed URL can be opened by hand', async () => {
    const bin = await mkdtemp(join(tmpdir(), 'mcp-auth-kit-no-browser-'));
    // An opener that finds no browser (xdg-open exits 3 then); `open` for macOS runners.
    for (const name of ['xdg-open', 'open']) {
      await writeFile(join(bin, name), '#!/bin/sh\nexit 3\n');
      await chmod(join(bin, name), 0o755);
    }
    const e = await homeEnv({ PATH: bin });
    delete e.CI;
    const run = await runCli(['--timeout', '1', 'login', stack.mcpUrl], e);
    await rm(bin, { recursive: true, force: true });
    expect(run.stderr).toMatch(/Open this URL to authorize:\n\n {2}http:\/\/localhost:\d+\/\S*auth/);
    expect(run.stderr).toContain('Could not open a browser on this machine: open the URL above by hand in a browser on this computer');
    expect(run.stderr).toContain('error: no answer came back from the browser within 1 s');
    expect(run.stderr).toContain('--timeout <seconds>');
  });

  describe('after login', () => {
    let e: NodeJS.ProcessEnv;
    beforeAll(async () => {
      e = await homeEnv();
      const login = await cliLogin(stack.mcpUrl, e);
      expect(login.exitCode, login.stderr).toBe(0);
    });

    it('status shows when the access token expires; status --check asks the server: valid', async () => {
      const status = await runCli(['status'], e);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(
        /status: {3}logged in; access token valid until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in \d+ (s|min|h)\)/,
      );
      const check = await runCli(['status', '--check'], e);
      expect(check.code, check.stderr).toBe(0);
      expect(check.stdout).toContain('check:    valid: the MCP server accepted the access token (HTTP 200)');
    });

    it('a token the server refuses before its expiry is reported revoked (exit 1); an expired one as expired, not "logged in"', async () => {
      const copy = await homeEnv();
      writeFileSync(join(copy.MCP_AUTH_KIT_HOME!, 'store.json'), readFileSync(join(e.MCP_AUTH_KIT_HOME!, 'store.json')));
      // A token the server no longer accepts (as after a revocation at an introspecting server).
      editTokens(copy.MCP_AUTH_KIT_HOME!, (t) => (t.access_token = 'revoked-token-value'));
      const revoked = await runCli(['status', '--check'], copy);
      expect(revoked.code).toBe(1);
      expect(revoked.stdout).toContain('check:    revoked: the MCP server refused the access token before its expiry (invalid_token');
      expect(revoked.stdout).toContain(`run \`mcp-auth-kit login ${stack.mcpUrl}\``);

      editTokens(copy.MCP_AUTH_KIT_HOME!, (t) => {
        t.expires_at = Math.floor(Date.now() / 1000) - 600;
        delete t.refresh_token;
      });
      const status = await runCli(['status'], copy);
      expect(status.stdout).not.toContain('logged in');
      expect(status.stdout).toMatch(/status: {3}expired at .* UTC \(10 min ago\), no refresh token; run `mcp-auth-kit login /);
      const expired = await runCli(['status', '--check'], copy);
      expect(expired.code).toBe(1);
      expect(expired.stdout).toContain('check:    expired: the MCP server refused the expired access token');
      const json = JSON.parse((await runCli(['status', '--json', '--check'], copy)).stdout) as Array<Record<string, unknown>>;
      expect(json[0]).toMatchObject({ expired: true, check: { result: 'expired', status: 401 } });
    });

    it('a tool the server does not have: the answer is shown and how to list the tools', async () => {
      const run = await runCli(['call', stack.mcpUrl, 'no_such_tool'], e);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('error: the MCP server refused the request: Tool no_such_tool not found');
      expect(run.stderr).toContain(`List what it offers with \`mcp-auth-kit tools ${stack.mcpUrl}\``);
    });

    it('status --check on a server that is down says it did not answer', async () => {
      const copy = await homeEnv();
      const port = await freePort();
      const moved = readFileSync(join(e.MCP_AUTH_KIT_HOME!, 'store.json'), 'utf8').replaceAll(new URL(stack.mcpUrl).port, String(port));
      writeFileSync(join(copy.MCP_AUTH_KIT_HOME!, 'store.json'), moved);
      const run = await runCli(['status', '--check'], copy);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(`could not check: the MCP server at http://localhost:${port}/mcp did not answer (connection refused)`);
    });

    it('OAuth 2.1 §4.3: a refused refresh says why before the browser is needed again', async () => {
      const copy = await homeEnv();
      writeFileSync(join(copy.MCP_AUTH_KIT_HOME!, 'store.json'), readFileSync(join(e.MCP_AUTH_KIT_HOME!, 'store.json')));
      editTokens(copy.MCP_AUTH_KIT_HOME!, (t) => {
        t.expires_at = Math.floor(Date.now() / 1000) - 600;
        t.refresh_token = 'a-refresh-token-the-as-never-issued';
      });
      const run = await runCli(['--no-browser', '--timeout', '1', 'tools', stack.mcpUrl], copy);
      expect(run.code).toBe(1);
      const why = run.stderr.indexOf(`Could not refresh the access token: ${stack.issuer} refused the refresh token (invalid_grant`);
      expect(why, run.stderr).toBeGreaterThanOrEqual(0);
      expect(run.stderr).toContain('A new sign-in in the browser is needed.');
      expect(run.stderr.indexOf('Open this URL to authorize')).toBeGreaterThan(why);
    });
  });
});
