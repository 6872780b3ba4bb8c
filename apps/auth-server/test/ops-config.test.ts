/**
 * The app's configuration reference: config file (JSON or YAML) + environment (wins), every
 * problem at once, production mode from NODE_ENV, `--print-config` with secrets masked.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, printableConfig } from '../src/config.js';
import { startAuthServer, storageFor } from '../src/index.js';
import { expectProblems } from './helpers/problems.js';

const MAIN = resolve(fileURLToPath(new URL('.', import.meta.url)), '../dist/main.js');
const NODE = process.env.npm_node_execpath || process.execPath;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'as-ops-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(NODE, [MAIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

const YAML = `
# every server-level key and a few of the authorization server's
port: 9555
issuer: https://auth.example.com
resource: https://mcp.example.com/mcp
databaseUrl: postgres://app:file-db-password@db.internal:5432/auth
databaseSchema: tenant_one
logLevel: warn
shutdownTimeoutMs: 3000
trustProxy: true
resources:
  - resource: https://mcp.example.com/mcp
    scopes:
      files:read: Read your files
    defaultScopes: [files:read]
clients:
  - client_id: backend
    client_secret: yaml-client-secret-0123456789
    grant_types: [client_credentials]
    redirect_uris: []
    response_types: []
registration:
  initialAccessToken: yaml-initial-access-token-0123
metrics:
  token: yaml-metrics-token-0123456789
users:
  - username: alice
    password: yaml-alice-password
`;

describe('config file and environment', () => {
  it('reads a YAML file; the environment wins over it', () => {
    const path = file('as.yaml', YAML);
    const { config, problems } = loadConfig({ AS_CONFIG_FILE: path, AS_PORT: '9666', LOG_LEVEL: 'debug' });
    expect(problems).toEqual([]);
    expect(config).toMatchObject({
      port: 9666,
      issuer: 'https://auth.example.com',
      resource: 'https://mcp.example.com/mcp',
      logLevel: 'debug',
      shutdownTimeoutMs: 3000,
    });
    expect(config.storage).toEqual({
      kind: 'postgres',
      url: 'postgres://app:file-db-password@db.internal:5432/auth',
      schema: 'tenant_one',
    });
    expect(config.authorizationServer).toMatchObject({
      trustProxy: true,
      registration: { initialAccessToken: 'yaml-initial-access-token-0123' },
    });
    expect(config.authorizationServer?.resources?.[0]?.scopes).toEqual({ 'files:read': 'Read your files' });
  });

  it('reads a JSON file the same way', () => {
    const path = file(
      'as.json',
      JSON.stringify({ issuer: 'https://auth.example.com', resources: [{ resource: 'https://mcp.example.com/mcp', scopes: { a: 'A' } }] }),
    );
    const { config, problems } = loadConfig({ AS_CONFIG_FILE: path });
    expect(problems).toEqual([]);
    expect(config.issuer).toBe('https://auth.example.com');
  });

  it('lists every problem at once: environment, file keys, and the authorization server configuration', () => {
    const path = file(
      'bad.yaml',
      `
colour: blue
issuer: http://auth.example.com
accessTokenTTL: -5
users:
  - username: bob
    password: short
`,
    );
    const { problems } = loadConfig({
      AS_CONFIG_FILE: path,
      AS_PORT: 'x',
      LOG_LEVEL: 'loud',
      METRICS: 'perhaps',
      SHUTDOWN_TIMEOUT_MS: '0',
    });
    const text = expectProblems(problems, [
      /AS_PORT must be a port number/,
      /LOG_LEVEL must be one of/,
      /METRICS must be 1 or 0/,
      /SHUTDOWN_TIMEOUT_MS must be a positive number/,
      /AS_CONFIG_FILE: unknown key "colour"/,
      /issuer: must use https/,
      /accessTokenTTL: must be a positive integer/,
      /users\[0\]\.password: at least 8 characters/,
    ]);
    expect(text).not.toContain('short');
  });

  it('a broken YAML file is reported with its line, never quoting its content', () => {
    const path = file('broken.yaml', 'issuer: https://a.example\nusers: [ { password: "hunter22-secret" \n');
    const { problems } = loadConfig({ AS_CONFIG_FILE: path });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/AS_CONFIG_FILE: cannot read .*broken\.yaml \(invalid YAML/);
    expect(problems[0]).not.toContain('hunter22');
  });

  it('NODE_ENV=production refuses the dev switches, the memory store and the demo user, with how to fix each', () => {
    const { config, problems } = loadConfig({
      NODE_ENV: 'production',
      DEV_AUTO_LOGIN: 'demo',
      CIMD_ALLOW_PRIVATE_NETWORK: '1',
      DATABASE_URL: 'memory:',
    });
    expect(config.production).toBe(true);
    expectProblems(problems, [
      /DEV_AUTO_LOGIN\): dev-only switch refused in production; unset it/,
      /CIMD_ALLOW_PRIVATE_NETWORK\): dev-only switch refused in production; unset it/,
      /memory store .* set DATABASE_URL=postgres/,
    ]);
  });

  it('AS_DEMO_USER=1 is refused for a non-loopback issuer', () => {
    const { problems } = loadConfig({ AS_DEMO_USER: '1', AS_ISSUER: 'https://auth.example.com' });
    expect(problems).toEqual([
      expect.stringMatching(
        /demoUser: refused because the issuer host "auth.example.com" is not loopback \(dev-only switch AS_DEMO_USER; unset it/,
      ),
    ]);
  });

  it('REDIS_URL (revocation signal): redis:// or rediss:// only; printed with its password masked', () => {
    expect(loadConfig({ REDIS_URL: 'http://127.0.0.1:6379' }).problems).toEqual(['REDIS_URL must be a redis:// or rediss:// URL']);
    const { config, problems } = loadConfig({ REDIS_URL: 'redis://:s3cret-pass@127.0.0.1:6379', REDIS_PREFIX: 'tenant-a:' });
    expect(problems).toEqual([]);
    expect(config).toMatchObject({ redisUrl: 'redis://:s3cret-pass@127.0.0.1:6379', redisPrefix: 'tenant-a:' });
    const printed = JSON.stringify(printableConfig(config));
    expect(printed).not.toContain('s3cret-pass');
    expect(printed).toContain('tenant-a:');
  });

  it('DATABASE_SCHEMA is honoured with a databaseUrl given through the API too', () => {
    expect(storageFor({ databaseUrl: 'postgres://u@127.0.0.1/db', databaseSchema: 'tenant_two' })).toEqual({
      kind: 'postgres',
      url: 'postgres://u@127.0.0.1/db',
      schema: 'tenant_two',
    });
  });
});

describe('--print-config', () => {
  it('prints the effective configuration with every secret masked and exits 0', async () => {
    const path = file('print.yaml', YAML);
    const out = await run(['--print-config'], { AS_CONFIG_FILE: path, METRICS_TOKEN: 'env-metrics-token-0123456789' });
    expect(out.code).toBe(0);
    const printed = JSON.parse(out.stdout) as Record<string, any>;
    expect(printed).toMatchObject({ port: 9555, issuer: 'https://auth.example.com', logLevel: 'warn', production: false });
    expect(printed.storage).toEqual({ kind: 'postgres', url: 'postgres://app:***@db.internal:5432/auth', schema: 'tenant_one' });
    expect(printed.authorizationServer.metrics.token).toBe('***');
    for (const secret of [
      'file-db-password',
      'yaml-client-secret',
      'yaml-initial-access-token',
      'yaml-metrics-token',
      'env-metrics-token',
      'yaml-alice-password',
    ]) {
      expect(out.stdout + out.stderr, secret).not.toContain(secret);
    }
    expect(printableConfig(loadConfig({ AS_CONFIG_FILE: path }).config)).toMatchObject({ configFile: path });
  });

  it('exits 1 and lists the problems when the configuration is invalid', async () => {
    const out = await run(['--print-config'], { NODE_ENV: 'production', DEV_AUTO_LOGIN: 'demo', AS_PORT: 'x' });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/Invalid configuration:\n {2}- .+\n {2}- .+\n/);
    expect(out.stderr).toMatch(/AS_PORT must be a port number/);
    expect(out.stderr).toMatch(/DEV_AUTO_LOGIN/);
  });

  /** stderr without Node 20's "Unsupported runtime" notice of oidc-provider. */
  const ownStderr = (text: string) =>
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('oidc-provider WARNING'))
      .join('\n');

  it('demoUser says what start-up will really do, and why: production, a listen address reachable from outside and a non-loopback issuer turn it off', async () => {
    const cases: [Record<string, string>, unknown][] = [
      [{}, 'on (auto: loopback issuer and listen addresses, not production)'],
      [{ NODE_ENV: 'production', MCP_RESOURCE: 'https://mcp.example.com/mcp' }, 'off (auto: production mode)'],
      [{ AS_HOST: '0.0.0.0' }, 'off (auto: listening on 0.0.0.0, which is reachable from outside)'],
      [{ AS_ISSUER: 'https://auth.example.com' }, 'off (auto: the issuer is not on a loopback host)'],
      [{ AS_DEMO_USER: '0' }, false],
    ];
    for (const [env, expected] of cases) {
      const out = await run(['--print-config'], { DATA_DIR: dir, ...env });
      expect(out.code, JSON.stringify(env)).toBe(0);
      expect((JSON.parse(out.stdout) as { demoUser: unknown }).demoUser, JSON.stringify(env)).toEqual(expected);
    }
  });

  it('production on the default resource (http://localhost:3000/mcp) is flagged: a warning, as it starts (not refused)', async () => {
    const warning =
      'warning: MCP_RESOURCE is not set, so tokens are issued for the demo resource http://localhost:3000/mcp, which no deployed MCP server is: ' +
      "set MCP_RESOURCE (or `resources` in AS_CONFIG_FILE) to your MCP server's public URL";
    const flagged = await run(['--print-config'], { NODE_ENV: 'production', DATA_DIR: dir });
    expect(flagged.code).toBe(0);
    expect(ownStderr(flagged.stderr)).toBe(warning);
    expect((JSON.parse(flagged.stdout) as { resource: string }).resource).toBe('http://localhost:3000/mcp');
    const quiet: Record<string, string>[] = [
      { NODE_ENV: 'production', MCP_RESOURCE: 'https://mcp.example.com/mcp' },
      {
        NODE_ENV: 'production',
        AS_CONFIG_FILE: file('resources.yaml', 'resources:\n  - resource: https://mcp.example.com/mcp\n    scopes: { files:read: Read }\n'),
      },
      {}, // development: the demo resource is the point
    ];
    for (const env of quiet) {
      const out = await run(['--print-config'], { DATA_DIR: dir, ...env });
      expect(out.code, JSON.stringify(env)).toBe(0);
      expect(ownStderr(out.stderr), JSON.stringify(env)).toBe('');
    }
  });

  it('the server logs the same warning when it starts in production on the default resource', async () => {
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (message: string) => void warnings.push(message) };
    for (const resource of [undefined, 'https://mcp.example.com/mcp']) {
      warnings.length = 0;
      const server = await startAuthServer({
        port: 0,
        host: '127.0.0.1',
        production: true,
        resource,
        storage: { kind: 'sqlite', file: join(dir, `start-${resource ? 'set' : 'default'}.sqlite`) },
        logger,
      });
      await server.close();
      const flagged = warnings.filter((w) => w.startsWith('MCP_RESOURCE is not set'));
      expect(flagged, String(resource)).toHaveLength(resource ? 0 : 1);
    }
  });
});
