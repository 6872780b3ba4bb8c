import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runAdmin, startAuthServer, type AdminIo, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { passwordLogin } from './helpers/support.js';

/**
 * The demo account carried into production. `demo` / `demo-password` is published (README,
 * start-up banner); a development database keeps the account after seeding is switched off.
 * OWASP ASVS 4.0 §2.3.1 / §2.5.4 (no default or shared accounts, no published initial
 * passwords) and RFC 6819 §5.1.4.2.2 (strong user passwords): the server must not start in
 * production while an account still signs in with that password, and must say how to fix it
 * (the admin tool's set-password or disable). After the fix it starts, and the public
 * password is refused on its login page.
 */

const MESSAGE =
  /account "demo" still signs in with the public demo password \(refused in production\).*npm run admin -- user set-password demo.*npm run admin -- user disable demo/s;
const MAIN = join(dirname(createRequire(import.meta.url).resolve('@mcp-auth-kit/auth-server')), 'main.js');

function adminIo(password = ''): AdminIo & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (l) => lines.push(l), err: (l) => lines.push(l), readPassword: async () => password };
}

const start = (dataDir: string, production: boolean) =>
  startAuthServer({ port: 0, host: '127.0.0.1', dataDir, production, logger: silentLogger });

/** A password login as `username` on the running server: 303 (signed in) or the page's status. */
const login = (server: RunningAuthServer, username: string, password: string) => passwordLogin(server, username, password, 'demo check');

describe('attack: the demo account of a development database, started in production', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'as-demo-'));
    dirs.push(dir);
    return dir;
  };
  /** A data dir as development leaves it: the demo account seeded with its public password. */
  async function developmentDataDir(): Promise<string> {
    const dir = fresh();
    const dev = await start(dir, false);
    expect(await dev.server.store.accounts.findByUsername('demo')).toBeTruthy();
    await dev.close();
    return dir;
  }
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  let dataDir: string;
  beforeAll(async () => {
    dataDir = await developmentDataDir();
  });

  it('production refuses to start while `demo` has the public password, naming the admin commands that fix it', async () => {
    await expect(start(dataDir, true)).rejects.toThrow(MESSAGE);
  });

  it('the real entry (NODE_ENV=production npm start) exits 1 with that message and never serves', async () => {
    const child = spawn(process.execPath, [MAIN], {
      env: { ...process.env, NODE_ENV: 'production', AS_PORT: '0', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    // A server that does start (the weakness) is stopped here rather than left behind.
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await new Promise<number | null>((r) => child.on('close', r));
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(out).toMatch(MESSAGE);
    expect(out).not.toContain('listening on');
  }, 30_000);

  it('after `user set-password demo` (admin tool) it starts, and the public password is refused at login', async () => {
    const io = adminIo('a-new-long-passphrase');
    expect(await runAdmin(['user', 'set-password', 'demo'], { DATA_DIR: dataDir }, io)).toBe(0);
    const server = await start(dataDir, true);
    try {
      expect(await login(server, 'demo', 'demo-password')).toBe(401);
      expect(await login(server, 'demo', 'a-new-long-passphrase')).toBe(303);
    } finally {
      await server.close();
    }
  });

  it('after `user disable demo` (admin tool) it starts too', async () => {
    const dir = await developmentDataDir();
    await expect(start(dir, true)).rejects.toThrow(MESSAGE);
    expect(await runAdmin(['user', 'disable', 'demo'], { DATA_DIR: dir }, adminIo())).toBe(0);
    const server = await start(dir, true);
    await server.close();
  });

  it('a non-loopback issuer outside production is refused the same way (the password is just as public there)', async () => {
    const dir = await developmentDataDir();
    await expect(
      startAuthServer({ port: 0, host: '127.0.0.1', issuer: 'https://auth.example.com', dataDir: dir, logger: silentLogger }),
    ).rejects.toThrow(
      /account "demo" still signs in with the public demo password \(refused for the non-loopback issuer https:\/\/auth\.example\.com\)/,
    );
  });

  it('AS_DEMO_USER=1 is refused in production even on loopback, and for a non-loopback issuer (dev-switches.attack.test.ts tries every switch)', async () => {
    const dir = await developmentDataDir();
    await expect(
      startAuthServer({ port: 0, host: '127.0.0.1', dataDir: dir, production: true, demoUser: true, logger: silentLogger }),
    ).rejects.toThrow(/demoUser \(AS_DEMO_USER\): dev-only switch refused in production/);
    await expect(
      startAuthServer({
        port: 0,
        host: '127.0.0.1',
        issuer: 'https://auth.example.com',
        dataDir: dir,
        demoUser: true,
        logger: silentLogger,
      }),
    ).rejects.toThrow(/demoUser: refused because the issuer host "auth\.example\.com" is not loopback/);
  });
});
