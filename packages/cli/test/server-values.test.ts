import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FileStore } from '@mcp-auth-kit/client';
import { run } from '../src/program.js';
import { recordingIo } from './helpers/io.js';
import { oauthServer, startHostileServer, type Behaviour } from '../../client/test/helpers/hostile-server.js';
import { closeAfterEach, scratch } from '../../client/test/helpers/scratch.js';

/**
 * Issue 46 items 2, 5, 8 and 9 (CLI part): what the CLI shows of values a server sent (checked by
 * the library, packages/client/test/server-values.test.ts), and each CLI command ends within its
 * stated bound whatever a server does.
 */
const hostile = closeAfterEach(startHostileServer);
const home = scratch('mak-values-').tmp;
const cli = (dir: string) => recordingIo({ MCP_AUTH_KIT_HOME: dir, MCP_AUTH_KIT_CLIENT_SECRET: 's3cret' }, { open: async () => false });
const machineLogin = (base: string) => ['--client-credentials', '--client-id', 'm2m', '--issuer', base, 'login', `${base}/mcp`];
const tokenAnswer = (extra: Record<string, unknown> = {}): Behaviour => ({
  json: { access_token: 'at', token_type: 'Bearer', expires_in: 3600, ...extra },
});

describe('status shows what a capped expires_in left (RFC 6749 §5.1; issue 46 item 8)', () => {
  it('status with a hostile AS that said expires_in: 1e300 prints every row and exits 0', async () => {
    const dir = home();
    const hostileAs = await hostile(oauthServer(tokenAnswer({ expires_in: 1e300 })));
    const fair = await hostile(oauthServer(tokenAnswer()));
    for (const s of [hostileAs, fair]) {
      const c = cli(dir);
      expect(await run(machineLogin(s.base), c.io), c.err()).toBe(0);
    }
    const c = cli(dir);
    expect(await run(['status'], c.io), c.err()).toBe(0);
    expect(c.out()).toContain(`${hostileAs.base}/mcp`);
    expect(c.out()).toContain(`${fair.base}/mcp`);
    expect(c.out().match(/access token valid until/g)).toHaveLength(2);
    expect(c.err()).toBe('');
  });

  it('a store written before the cap (expires_at 1e300) does not break status for the other rows', async () => {
    const dir = home();
    const fair = await hostile(oauthServer(tokenAnswer()));
    const first = cli(dir);
    expect(await run(machineLogin(fair.base), first.io), first.err()).toBe(0);
    const store = new FileStore(join(dir, 'store.json'));
    const [binding] = await store.listServers();
    await store.setServer({ ...binding!, server: 'http://127.0.0.1:1/mcp', resource: 'http://127.0.0.1:1/mcp' });
    await store.setTokens({
      issuer: binding!.issuer,
      resource: 'http://127.0.0.1:1/mcp',
      access_token: 'x',
      token_type: 'Bearer',
      client_id: 'm2m',
      expires_at: 1e300,
    });
    const c = cli(dir);
    expect(await run(['status'], c.io), c.err()).toBe(0);
    expect(c.out()).toContain('http://127.0.0.1:1/mcp');
    expect(c.out()).toMatch(/valid until a time out of range \(in more than 100 years\)/);
    expect(c.out()).toContain(`${fair.base}/mcp`);
  });
});

describe('AS metadata over 64 KiB (RFC 8414 §2; issue 46 item 9)', () => {
  it('metadata over 64 KiB is refused and not stored (every later command would read it)', async () => {
    const dir = home();
    const s = await hostile(oauthServer(tokenAnswer(), { padding: 'x'.repeat(200 * 1024) }));
    const c = cli(dir);
    expect(await run(machineLogin(s.base), c.io)).toBe(1);
    expect(c.err()).toMatch(/authorization server metadata is \d+ bytes, more than the 65536 a client keeps; refused/);
    const stored = existsSync(join(dir, 'store.json')) ? readFileSync(join(dir, 'store.json'), 'utf8') : '';
    expect(stored).not.toContain('xxxx');
  });
});

describe('each CLI command ends within its bound (issue 46 item 2)', () => {
  it('login against metadata that trickles one byte at a time ends at --request-timeout', async () => {
    const s = await hostile((path) => (path.startsWith('/.well-known/') ? { trickle: { everyMs: 50 } } : undefined));
    const c = cli(home());
    const started = Date.now();
    expect(await run(['--request-timeout', '0.4', 'login', `${s.base}/mcp`], c.io)).toBe(1);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(c.err()).toMatch(/did not answer in time/);
  });

  it('login against a token endpoint that never answers ends at --request-timeout', async () => {
    const s = await hostile(oauthServer({ silent: true }));
    const c = cli(home());
    const started = Date.now();
    expect(await run(['--request-timeout', '0.4', ...machineLogin(s.base)], c.io)).toBe(1);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(c.err()).toMatch(/did not answer in time \(no response headers|did not answer in time \(no complete answer/);
  });

  it('status --check against an MCP server that never answers ends at --request-timeout and reports it', async () => {
    const dir = home();
    const s = await hostile((path, base) => (path === '/mcp' ? { silent: true } : oauthServer(tokenAnswer())(path, base)));
    const login = cli(dir);
    expect(await run(machineLogin(s.base), login.io), login.err()).toBe(0);
    const c = cli(dir);
    const started = Date.now();
    expect(await run(['--request-timeout', '0.4', 'status', '--check'], c.io)).toBe(1);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(c.out()).toMatch(/could not check: the MCP server at .* did not answer in time/);
  });

  it('--request-timeout must be a positive number of seconds; the help states the bounds', async () => {
    const c = cli(home());
    expect(await run(['--request-timeout', '0', 'status'], c.io)).not.toBe(0);
    const help = cli(home());
    await run(['--help'], help.io);
    expect(help.out()).toMatch(/--request-timeout <seconds>/);
    expect(help.out()).toMatch(/Time limits:/);
  });
});

/** The built `mcp-auth-kit` bin as a real process: its exit code and how long it ran. */
function bin(args: string[], dir: string): Promise<{ code: number | null; ms: number; stderr: string }> {
  const path = fileURLToPath(new URL('../bin/mcp-auth-kit.js', import.meta.url));
  const started = Date.now();
  const child = spawn(process.execPath, [path, ...args], {
    env: { ...process.env, MCP_AUTH_KIT_HOME: dir, MCP_AUTH_KIT_CLIENT_SECRET: 's3cret', CI: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(kill);
      resolve({ code, ms: Date.now() - started, stderr });
    }),
  );
}

describe('the mcp-auth-kit process exits within its bound (issue 46 item 2; needs npm run build)', () => {
  it('tools against an MCP server whose authorization server trickles its metadata', async () => {
    const s = await hostile((path, base) => {
      if (path === '/mcp') return { json: {}, status: 401 };
      if (path === '/.well-known/oauth-protected-resource/mcp') return { json: { resource: `${base}/mcp`, authorization_servers: [base] } };
      return path.startsWith('/.well-known/') ? { trickle: { everyMs: 50 } } : undefined;
    });
    const run = await bin(['--request-timeout', '0.5', 'tools', `${s.base}/mcp`], home());
    expect(run.code).toBe(1);
    expect(run.ms).toBeLessThan(10_000);
    expect(run.stderr).toMatch(/did not answer in time/);
  });

  it('logout against a revocation endpoint that never answers (revocation is best effort)', async () => {
    const dir = home();
    const absolute = await hostile((path, base) =>
      path === '/revoke'
        ? { silent: true }
        : oauthServer(tokenAnswer({ refresh_token: 'rt' }), { revocation_endpoint: `${base}/revoke` })(path, base),
    );
    const login = cli(dir);
    expect(await run(machineLogin(absolute.base), login.io), login.err()).toBe(0);
    const out = await bin(['--request-timeout', '0.5', ...machineLogin(absolute.base).slice(0, 5), 'logout'], dir);
    expect(out.code, out.stderr).toBe(0);
    expect(out.ms).toBeLessThan(10_000);
    expect(absolute.seen).toContain('/revoke');
  });
});
