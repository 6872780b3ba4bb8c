import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { ConfigError as SharedConfigError } from '@mcp-auth-kit/protocol';
import { configFromEnv, startAuthServer, ConfigError } from '../src/index.js';

const MAIN = resolve(fileURLToPath(new URL('.', import.meta.url)), '../dist/main.js');
// `npx vitest` may run under the workspace's Node 22 binary (node_modules/.bin/node); the
// native SQLite driver is built for the Node that ran npm, so the child uses that one.
const NODE = process.env.npm_node_execpath || process.execPath;

describe('configFromEnv', () => {
  it('uses the runtime-contract defaults', () => {
    const c = configFromEnv({});
    expect(c).toMatchObject({
      port: 9000,
      issuer: undefined,
      dataDir: '.data',
      devAutoLogin: undefined,
      cimdAllowPrivateNetwork: false,
      resource: undefined,
    });
  });

  it('reads TRUST_PROXY as the number of proxies in front (dev switches are refused with it: dev-switches.attack)', () => {
    const c = configFromEnv({ AS_ISSUER: 'https://auth.example.com', TRUST_PROXY: '1', MCP_RESOURCE: 'https://mcp.example.com/mcp' });
    expect(c.authorizationServer?.trustProxy).toBe(1);
  });

  it('reads every variable', () => {
    const c = configFromEnv({
      AS_PORT: '9100',
      AS_ISSUER: 'http://localhost:9100',
      DATA_DIR: '/tmp/x',
      MCP_RESOURCE: 'http://localhost:3100/mcp',
      DEV_AUTO_LOGIN: 'demo',
      CIMD_ALLOW_PRIVATE_NETWORK: '1',
      DATABASE_URL: 'postgres://root@127.0.0.1:5432/test',
      AS_HOST: '::1',
    });
    expect(c.host).toBe('::1');
    expect(c).toMatchObject({
      port: 9100,
      issuer: 'http://localhost:9100',
      dataDir: '/tmp/x',
      resource: 'http://localhost:3100/mcp',
      devAutoLogin: 'demo',
      cimdAllowPrivateNetwork: true,
    });
    expect(c.storage).toMatchObject({ kind: 'postgres' });
  });

  // Review 40 finding 3: TRUST_PROXY names how many proxies (or which) are believed, never "every hop".
  it.each([
    ['0', 0],
    ['false', false],
    ['true', true],
    ['2', 2],
    ['10.0.0.0/8, ::1', ['10.0.0.0/8', '::1']],
    ['loopback', ['loopback']],
  ])('TRUST_PROXY=%s reads as %j', (text, value) => {
    expect(configFromEnv({ TRUST_PROXY: text }).authorizationServer?.trustProxy).toEqual(value);
  });

  it('TRUST_PROXY that is neither a count nor addresses is a configuration error', () => {
    expect(() => configFromEnv({ TRUST_PROXY: 'yes please' })).toThrow(/TRUST_PROXY must be 0, the number of proxies/);
  });

  it('lists every bad variable at once, never echoing the database URL', () => {
    let error: unknown;
    try {
      configFromEnv({
        AS_PORT: 'abc',
        AS_ISSUER: 'not a url',
        MCP_RESOURCE: '::',
        CIMD_ALLOW_PRIVATE_NETWORK: 'maybe',
        DATABASE_URL: 'mysql://u:hunter2@h/db',
        TRUST_PROXY: 'yes',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(ConfigError).toBe(SharedConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).toHaveLength(6);
    expect(message).toBe(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    expect(problems.join('\n')).not.toContain('hunter2');
  });
});

describe('AS_CONFIG_FILE', () => {
  it('merges a JSON file (pre-registered clients, resources) into the server configuration', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'as-config-'));
    try {
      const file = join(dir, 'as.json');
      writeFileSync(
        file,
        JSON.stringify({
          resources: [{ resource: 'https://mcp.example.com/mcp', scopes: { 'files:read': 'Read files' } }],
          clients: [
            {
              client_id: 'desktop-app',
              client_name: 'Desktop',
              redirect_uris: ['http://127.0.0.1/callback'],
              token_endpoint_auth_method: 'none',
              application_type: 'native',
            },
          ],
        }),
      );
      const options = configFromEnv({ AS_CONFIG_FILE: file });
      const s = await startAuthServer({ ...options, port: 0, storage: { kind: 'memory' }, logger: silentLogger });
      try {
        const m = (await (await fetch(`http://127.0.0.1:${s.port}/.well-known/oauth-authorization-server`)).json()) as {
          scopes_supported: string[];
        };
        expect(m.scopes_supported).toContain('files:read');
        expect(m.scopes_supported).not.toContain('notes:read');
        expect(await s.server.provider.Client.find('desktop-app')).toBeTruthy();
      } finally {
        await s.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a broken file is a ConfigError that does not quote the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'as-config-'));
    try {
      const file = join(dir, 'as.json');
      writeFileSync(file, '{"users":[{"username":"a","password":"s3cret-pass"}');
      expect(() => configFromEnv({ AS_CONFIG_FILE: file })).toThrow(/AS_CONFIG_FILE: cannot read .* \(invalid JSON\)/);
      try {
        configFromEnv({ AS_CONFIG_FILE: file });
      } catch (err) {
        expect((err as Error).message).not.toContain('s3cret');
      }
      expect(() => configFromEnv({ AS_CONFIG_FILE: join(dir, 'missing.json') })).toThrow(/ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('startAuthServer', () => {
  const running: Array<{ close(): Promise<void> }> = [];
  afterAll(async () => {
    for (const r of running) await r.close();
  });

  it('listens first (port 0), then builds the issuer http://localhost:<port>', async () => {
    const s = await startAuthServer({ port: 0, storage: { kind: 'memory' }, logger: silentLogger });
    running.push(s);
    expect(s.port).toBeGreaterThan(0);
    expect(s.issuer).toBe(`http://localhost:${s.port}`);
    const m = (await (await fetch(`http://127.0.0.1:${s.port}/.well-known/oauth-authorization-server`)).json()) as Record<string, any>;
    expect(m.issuer).toBe(s.issuer);
    expect(m.scopes_supported).toEqual(expect.arrayContaining(['notes:read', 'notes:write']));
    // The demo user is seeded for a loopback issuer.
    expect(await s.server.store.accounts.findByUsername('demo')).toBeTruthy();
  });

  it('DEV_AUTO_LOGIN is refused with a clear error when the issuer is not loopback', async () => {
    await expect(
      startAuthServer({
        port: 0,
        host: '127.0.0.1',
        issuer: 'https://auth.example.com',
        devAutoLogin: 'demo',
        storage: { kind: 'memory' },
        logger: silentLogger,
      }),
    ).rejects.toThrow(/devAutoLogin: refused/);
  });

  it('does not seed the demo user for a non-loopback issuer', async () => {
    const s = await startAuthServer({
      port: 0,
      host: '127.0.0.1',
      issuer: 'https://auth.example.com',
      storage: { kind: 'memory' },
      logger: silentLogger,
    });
    running.push(s);
    expect(await s.server.store.accounts.findByUsername('demo')).toBeUndefined();
  });
});

function runMain(env: Record<string, string>) {
  const child = spawn(NODE, [MAIN], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const ready = new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${out}`)), 20_000);
    child.stdout.on('data', () => {
      const m = /issuer\s+(http:\/\/localhost:\d+)/.exec(out);
      if (m && out.includes('demo login')) {
        clearTimeout(timer);
        resolvePromise(m[1]!);
      }
    });
  });
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, ready, exited, output: () => out };
}

describe('main.ts (npm start entry)', () => {
  it('prints URLs and demo credentials, keeps data in DATA_DIR across restarts, stops cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'as-data-'));
    try {
      const first = runMain({ AS_PORT: '0', DATA_DIR: dataDir });
      const issuer = await first.ready;
      expect(first.output()).toContain('username "demo", password "demo-password"');
      const port = new URL(issuer).port;
      const reg = await fetch(`http://127.0.0.1:${port}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'], application_type: 'native', token_endpoint_auth_method: 'none' }),
      });
      expect(reg.status).toBe(201);
      const client = (await reg.json()) as { client_id: string; registration_access_token: string };
      const jwks1 = await (await fetch(`http://127.0.0.1:${port}/jwks`)).json();
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      const second = runMain({ AS_PORT: port, DATA_DIR: dataDir });
      await second.ready;
      const read = await fetch(`http://127.0.0.1:${port}/reg/${client.client_id}`, {
        headers: { authorization: `Bearer ${client.registration_access_token}` },
      });
      expect(read.status).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${port}/jwks`)).json()).toEqual(jwks1);
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
      expect(second.output()).not.toContain(client.registration_access_token);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses DEV_AUTO_LOGIN for a non-loopback AS_ISSUER and exits non-zero', async () => {
    const run = runMain({ AS_PORT: '0', AS_ISSUER: 'https://auth.example.com', DEV_AUTO_LOGIN: 'demo', DATABASE_URL: 'memory:' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(/devAutoLogin: refused because the issuer host "auth.example.com" is not loopback/);
  });
});
