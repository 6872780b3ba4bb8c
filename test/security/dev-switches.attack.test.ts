import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  APP_DEV_SWITCHES,
  APP_FILE_KEYS,
  ConfigError,
  loadConfig,
  startAuthServer,
  type StartAuthServerOptions,
} from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';

/**
 * Class: development conveniences are unreachable from outside (issue 46 items 1 and 9).
 *
 * A dev switch (DEV_AUTO_LOGIN, CIMD_ALLOW_PRIVATE_NETWORK, the demo account `demo` /
 * `demo-password` of AS_DEMO_USER, …) was judged by the issuer: with the default issuer
 * `http://localhost:9000` and AS_HOST=0.0.0.0, anyone who could reach the port got an
 * authorization code for the DEV_AUTO_LOGIN user without credentials, and the demo account
 * with its published password was seeded. Who can connect is decided by the listen address
 * (POSIX bind(2): INADDR_ANY / in6addr_any accept on every interface), so every switch is
 * refused unless the server listens on loopback only AND runs outside production (and, as
 * before, has a loopback issuer). Refusal: the process does not start, with a config error that
 * names the switch and the fix. MCP security best practices (§Local MCP server compromise:
 * local-only conveniences must not be exposed), OWASP ASVS 4.0 §2.5.4 (no default accounts).
 *
 * The processes below listen on 0.0.0.0 only when they are meant to start; this test only
 * ever connects to 127.0.0.1.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(dirname(createRequire(import.meta.url).resolve('@mcp-auth-kit/auth-server')), 'main.js');
// The native SQLite driver is built for the Node that ran npm (see apps/auth-server/test).
const NODE = process.env.npm_node_execpath || process.execPath;
const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'as-dev-switch-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs the real entry (`npm start`'s AS) until it exits or says it listens; a started one is stopped. */
async function runMain(env: Record<string, string>): Promise<{ code: number | null; output: string; started: boolean }> {
  const child = spawn(NODE, [MAIN], {
    env: { PATH: process.env.PATH ?? '', AS_PORT: '0', DATA_DIR: dataDir(), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let started = false;
  const onData = (d: string) => {
    output += d;
    // The weakness: a server that starts is stopped here rather than left behind.
    if (!started && /listening on/.test(output)) {
      started = true;
      child.kill('SIGTERM');
    }
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((r) => child.on('close', r));
  clearTimeout(timer);
  return { code, output, started };
}

async function refusal(options: StartAuthServerOptions): Promise<ConfigError> {
  let running: Awaited<ReturnType<typeof startAuthServer>> | undefined;
  try {
    running = await startAuthServer({ port: 0, storage: { kind: 'memory' }, logger: silentLogger, ...options });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  await running.close();
  throw new Error(`started with ${JSON.stringify(options)}`);
}

describe('reproduction: the AS on every interface with the default localhost issuer', () => {
  it.each([
    ['DEV_AUTO_LOGIN=admin', { DEV_AUTO_LOGIN: 'admin' }, /DEV_AUTO_LOGIN/],
    ['AS_DEMO_USER=1', { AS_DEMO_USER: '1' }, /AS_DEMO_USER/],
    ['CIMD_ALLOW_PRIVATE_NETWORK=1', { CIMD_ALLOW_PRIVATE_NETWORK: '1' }, /CIMD_ALLOW_PRIVATE_NETWORK/],
  ])(
    'AS_HOST=0.0.0.0 with %s: exits 1 before listening, naming the switch and the fix',
    async (_name, env, name) => {
      const run = await runMain({ AS_HOST: '0.0.0.0', ...env });
      expect(run.started, run.output).toBe(false);
      expect(run.code).toBe(1);
      expect(run.output).toMatch(name);
      expect(run.output).toMatch(/listens on 0\.0\.0\.0 \(every interface\), which is reachable from outside/);
      expect(run.output).toMatch(/listen on loopback only \(AS_HOST unset, or 127\.0\.0\.1/);
    },
    30_000,
  );

  it('AS_HOST=:: (IPv6 any, dual stack) is refused the same way', async () => {
    const run = await runMain({ AS_HOST: '::', DEV_AUTO_LOGIN: 'admin' });
    expect(run.started, run.output).toBe(false);
    expect(run.code).toBe(1);
    expect(run.output).toMatch(
      /devAutoLogin \(DEV_AUTO_LOGIN\): dev-only switch refused because the server listens on :: \(every interface\)/,
    );
  }, 30_000);

  it('on every interface without dev switches it starts, and seeds no demo account (default: off when reachable from outside)', async () => {
    const dir = dataDir();
    const server = await startAuthServer({ port: 0, host: '0.0.0.0', dataDir: dir, logger: silentLogger });
    try {
      expect(await server.server.store.accounts.findByUsername('demo')).toBeFalsy();
      // Connect on loopback only: the server answers, with no auto-login user behind it.
      const res = await fetch(`http://127.0.0.1:${server.port}/.well-known/oauth-authorization-server`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    } finally {
      await server.close();
    }
  });

  it('a demo account left from loopback development stops a start on every interface (its password is public)', async () => {
    const dir = dataDir();
    const dev = await startAuthServer({ port: 0, host: '127.0.0.1', dataDir: dir, logger: silentLogger });
    expect(await dev.server.store.accounts.findByUsername('demo')).toBeTruthy();
    await dev.close();
    const error = await refusal({ host: '0.0.0.0', dataDir: dir, storage: undefined });
    expect(error.message).toMatch(/account "demo" still signs in with the public demo password \(refused while listening on 0\.0\.0\.0/);
  });

  it('on loopback (the default) the runtime contract still holds: DEV_AUTO_LOGIN and the demo user start', async () => {
    const server = await startAuthServer({ port: 0, devAutoLogin: 'demo', storage: { kind: 'memory' }, logger: silentLogger });
    try {
      expect(await server.server.store.accounts.findByUsername('demo')).toBeTruthy();
    } finally {
      await server.close();
    }
  });
});

describe('production refuses the demo user, even on loopback', () => {
  it('NODE_ENV=production AS_DEMO_USER=1 (loopback listen, loopback issuer) exits 1 naming the switch', async () => {
    const run = await runMain({ NODE_ENV: 'production', AS_DEMO_USER: '1', MCP_RESOURCE: 'https://mcp.example.com/mcp' });
    expect(run.started, run.output).toBe(false);
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/demoUser \(AS_DEMO_USER\): dev-only switch refused in production; unset it \(AS_DEMO_USER=0\)/);
  }, 30_000);

  it('NODE_ENV=production AS_DEMO_USER=1 on every interface too', async () => {
    const { problems } = loadConfig({ NODE_ENV: 'production', AS_DEMO_USER: '1', AS_HOST: '0.0.0.0' });
    expect(problems.join('\n')).toMatch(/demoUser \(AS_DEMO_USER\): dev-only switch refused in production/);
  });
});

/** How the test turns each row of the table on (a row without an entry fails the enumeration). */
const TURN_ON: Record<string, StartAuthServerOptions> = {
  devAutoLogin: { devAutoLogin: 'admin' },
  'cimd.allowPrivateNetwork': { cimdAllowPrivateNetwork: true },
  'cimd.extraCaCertificates': {
    cimdAllowPrivateNetwork: true,
    authorizationServer: { cimd: { extraCaCertificates: '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----' } },
  },
  demoUser: { demoUser: true },
};

const EXPOSED_HOSTS = ['0.0.0.0', '::', '192.0.2.10'];

describe('every dev switch, refused on every interface and in production', () => {
  it('each row of the table has a way to turn it on here', () => {
    expect(APP_DEV_SWITCHES.map((s) => s.setting).sort()).toEqual(Object.keys(TURN_ON).sort());
  });

  for (const sw of APP_DEV_SWITCHES) {
    const on = TURN_ON[sw.setting] ?? {};
    const label = sw.env ? `${sw.setting} (${sw.env})` : sw.setting;
    const escaped = label.replace(/[.()]/g, (c) => `\\${c}`);
    for (const host of EXPOSED_HOSTS) {
      it(`${label} with host ${host}: refused before listening`, async () => {
        const error = await refusal({ ...on, host });
        expect(error.message).toMatch(
          new RegExp(`${escaped}: dev-only switch refused because the server listens on ${host.replace(/\./g, '\\.')}`),
        );
        expect(error.message).toContain(sw.fix);
      });
    }
    it(`${label} in production (loopback listen and issuer): refused`, async () => {
      const error = await refusal({ ...on, production: true, storage: undefined, dataDir: dataDir() });
      expect(error.message).toMatch(new RegExp(`${escaped}: dev-only switch refused in production`));
    });
    it(`${label} on loopback, outside production: starts (the dev setup of the runtime contract)`, async () => {
      const server = await startAuthServer({ port: 0, storage: { kind: 'memory' }, logger: silentLogger, ...on });
      await server.close();
    });
  }

  it('the environment reaches the same table: AS_HOST=0.0.0.0 with each switch is a config problem', () => {
    const envOn: Record<string, Record<string, string>> = {
      DEV_AUTO_LOGIN: { DEV_AUTO_LOGIN: 'admin' },
      CIMD_ALLOW_PRIVATE_NETWORK: { CIMD_ALLOW_PRIVATE_NETWORK: '1' },
      AS_DEMO_USER: { AS_DEMO_USER: '1' },
    };
    for (const sw of APP_DEV_SWITCHES.filter((s) => s.env)) {
      const { problems } = loadConfig({ AS_HOST: '0.0.0.0', ...envOn[sw.env!] });
      expect(problems.join('\n'), sw.env).toMatch(
        new RegExp(`\\(${sw.env}\\): dev-only switch refused because the server listens on 0\\.0\\.0\\.0`),
      );
    }
  });
});

/**
 * The outside review's second paths (issue 46, review finding 7): `NODE_ENV` spelt in another case
 * dropped every production check, and a server configured behind a proxy (`TRUST_PROXY`) still
 * honoured the dev switches, although a proxy brings requests from elsewhere whatever the listen
 * address is.
 */
describe('second paths around the rule: NODE_ENV in another case, a proxy in front', () => {
  it.each(['Production', 'PRODUCTION', ' production '])('NODE_ENV=%j is production: the demo user is refused', (nodeEnv) => {
    const { config, problems } = loadConfig({ NODE_ENV: nodeEnv, AS_DEMO_USER: '1' });
    expect(config.production).toBe(true);
    expect(problems.join('\n')).toMatch(/demoUser \(AS_DEMO_USER\): dev-only switch refused in production/);
  });

  it('NODE_ENV=Production with AS_HOST=0.0.0.0 and the default http issuer exits 1 (the production issuer rules apply)', async () => {
    const run = await runMain({ NODE_ENV: 'Production', AS_HOST: '0.0.0.0', MCP_RESOURCE: 'https://mcp.example.com/mcp' });
    expect(run.started, run.output).toBe(false);
    expect(run.code).toBe(1);
  }, 30_000);

  for (const [label, on] of Object.entries(TURN_ON)) {
    it(`${label} with trustProxy (a proxy in front), on loopback: refused before listening`, async () => {
      const err = await refusal({ ...on, authorizationServer: { ...on.authorizationServer, trustProxy: 1 } });
      expect(err.problems.join('\n')).toMatch(/dev-only switch refused because trustProxy \(TRUST_PROXY\) says a proxy forwards requests/);
    });
  }

  it('the environment too: TRUST_PROXY=1 with DEV_AUTO_LOGIN or AS_DEMO_USER=1 is a config problem', () => {
    for (const env of [{ DEV_AUTO_LOGIN: 'admin' }, { AS_DEMO_USER: '1' }]) {
      const { problems } = loadConfig({ TRUST_PROXY: '1', ...env });
      expect(problems.join('\n'), JSON.stringify(env)).toMatch(/dev-only switch refused because trustProxy \(TRUST_PROXY\)/);
    }
  });

  it('behind a proxy the demo account is not seeded by default (not a local server)', async () => {
    const server = await startAuthServer({
      port: 0,
      storage: { kind: 'memory' },
      logger: silentLogger,
      authorizationServer: { trustProxy: 1 },
    });
    try {
      expect(await server.server.store.accounts.findByUsername('demo')).toBeFalsy();
    } finally {
      await server.close();
    }
  });
});

/**
 * The enumeration: a source scan of every place a setting is born (env names, option and config
 * docs) that fails when a dev-only setting is not a row of the table above, or an environment
 * variable has not been reviewed.
 */
describe('enumeration: every dev-only setting of the sources is a row of the table', () => {
  const sources = [
    ...[
      'apps/auth-server/src',
      'apps/demo-mcp-server/src',
      'packages/authorization-server/src/ops',
      'packages/authorization-server/src/config',
    ].flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `${dir}/${f}`),
    ),
    'packages/authorization-server/src/config.ts',
    'packages/authorization-server/src/clients/cimd.ts',
    'packages/authorization-server/src/upstream/config.ts',
    'packages/authorization-server/src/grants/jwt-bearer/config.ts',
    'scripts/start.mjs',
    'scripts/port-check.mjs',
    'scripts/demo-drive.mjs',
  ].map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));

  /** Environment variables that were reviewed and are not development conveniences (why). */
  const NOT_DEV_ONLY: Record<string, string> = {
    AS_PORT: 'port',
    AS_HOST: 'the listen address this rule judges',
    AS_ISSUER: 'issuer; production rules in ops/production.ts',
    MCP_RESOURCE: 'audience',
    DATA_DIR: 'storage',
    DATABASE_URL: 'storage',
    DATABASE_SCHEMA: 'storage',
    REDIS_URL: 'shared state',
    REDIS_PREFIX: 'shared state',
    LOG_LEVEL: 'logging',
    SHUTDOWN_TIMEOUT_MS: 'shutdown',
    AS_CONFIG_FILE: 'configuration file',
    NODE_ENV: 'production mode itself',
    TRUST_PROXY: 'deployment behind a TLS proxy',
    METRICS: 'metrics',
    METRICS_TOKEN: 'metrics authentication',
    DPOP_NONCE_SECRET: 'DPoP nonces',
    DPOP_REQUIRE_NONCE: 'DPoP policy (stricter)',
    ID_JAG_ISSUER: 'enterprise IdP trust (https unless a loopback IdP on a loopback issuer)',
    ID_JAG_JWKS_URI: 'enterprise IdP trust',
    ID_JAG_CLIENTS: 'enterprise IdP trust',
    ID_JAG_ACCOUNT_MATCH: 'enterprise IdP trust',
    THIRD_PARTY_PROVIDERS_FILE: 'third-party providers (https unless a loopback provider on a loopback issuer)',
    THIRD_PARTY_ENCRYPTION_KEY: 'the token vault key (required in production)',
    AS_ADMIN_PASSWORD: 'admin tool input',
    MCP_PORT: 'port',
    MCP_HOST: 'listen address of the demo MCP server',
    MCP_ALLOWED_ORIGINS: 'Origin allow-list (stricter)',
    MCP_DPOP_REQUIRED: 'DPoP policy (stricter)',
    MCP_METRICS: 'metrics',
    START_READY_TIMEOUT_MS: 'npm start timing',
    START_STOP_TIMEOUT_MS: 'npm start timing',
    DEMO_DRIVE_PORT: 'port (the demo drive itself starts only for a loopback AS_ISSUER outside production)',
    MCP_CLIENT_ID: "the MCP server's own confidential client for RFC 8693 token exchange (AS and demo server)",
    MCP_CLIENT_SECRET: "that client's secret (set by npm start for its children, random per start)",
    DEMO_DRIVE_API: "the upstream API the demo's drive tool calls with the exchanged token (operator-set, needs MCP_CLIENT_*)",
    CONSOLE_PATH: 'where the operator console is served (off without it; admin role, fresh sign-in, same origin)',
    CONSOLE_FIRST_ADMIN: 'the admin role for an operator-made account (never a self-signed-up one)',
    AUDIT_RETENTION_DAYS: 'how long audit records are kept in the store',
    MCP_STATE_SECRET: "the demo's state-handle MAC key (random per start without it)",
    DEMO_DRIVE_CLIENT_SECRET: "set by npm start for its own children (the AS's secret at the demo drive), random per start",
  };

  it('every environment variable the sources read is a dev switch of the table or reviewed as not dev-only', () => {
    const names = new Set<string>(Object.values(APP_FILE_KEYS));
    for (const { text } of sources) {
      for (const m of text.matchAll(/\b(?:process\.env|env)(?:\.|\[')([A-Z][A-Z0-9_]+)/g)) names.add(m[1]!);
    }
    // guards against a scan that reads nothing
    expect(names).toContain('DEV_AUTO_LOGIN');
    expect(names).toContain('MCP_DPOP_REQUIRED');
    const dev = new Set(APP_DEV_SWITCHES.map((s) => s.env).filter(Boolean));
    const unreviewed = [...names].filter((n) => !dev.has(n) && !(n in NOT_DEV_ONLY));
    expect(unreviewed, 'classify each: a row of APP_DEV_SWITCHES (with a refusal) or NOT_DEV_ONLY (with why)').toEqual([]);
    for (const name of dev) expect(NOT_DEV_ONLY, `${name} is in both lists`).not.toHaveProperty(name!);
  });

  it('every setting documented as dev-only (option and config docs) is a row of the table', () => {
    const marked = new Set<string>();
    for (const { text } of sources) {
      for (const m of text.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*?)\*\/\s*(?:readonly\s+)?(\w+)\??:/g)) {
        if (/\bdev[- ]only\b/i.test(m[1]!)) marked.add(m[2]!);
      }
    }
    expect([...marked].sort()).toEqual(expect.arrayContaining(['allowPrivateNetwork', 'devAutoLogin', 'extraCaCertificates', 'demoUser']));
    const envOfKey = APP_FILE_KEYS as Record<string, string>;
    const rows = APP_DEV_SWITCHES.map((s) => ({ last: s.setting.split('.').pop()!, env: s.env }));
    for (const name of marked) {
      const covered = rows.some((r) => r.last === name || (envOfKey[name] !== undefined && envOfKey[name] === r.env));
      expect(covered, `${name} is documented as dev-only but has no row in APP_DEV_SWITCHES`).toBe(true);
    }
  });

  it('no source refuses a dev switch by the issuer alone: the only refusals come from the table (devSwitchProblems)', () => {
    for (const { path, text } of sources) {
      if (path.endsWith('ops/dev-switches.ts')) continue;
      expect(text, path).not.toMatch(/refused because the issuer host/);
    }
  });
});

describe('issuer rules of production (issue 46 item 9)', () => {
  const production = { NODE_ENV: 'production', MCP_RESOURCE: 'https://mcp.example.com/mcp' };

  it('an issuer with credentials (RFC 8414 §2: scheme, host, port, path only) is refused, without echoing them', () => {
    for (const issuer of ['https://user:s3cret-pass@auth.example.com', 'https://user@auth.example.com', 'https://@auth.example.com']) {
      const { problems } = loadConfig({ ...production, AS_ISSUER: issuer });
      expect(problems.join('\n'), issuer).toMatch(/issuer: must not contain user information \(credentials\)/);
      expect(problems.join('\n')).not.toContain('s3cret-pass');
    }
  });

  it('an issuer with a query or fragment is refused (RFC 8414 §2)', () => {
    for (const issuer of ['https://auth.example.com?tenant=a', 'https://auth.example.com#x', 'https://auth.example.com?']) {
      const { problems } = loadConfig({ ...production, AS_ISSUER: issuer });
      expect(problems.join('\n'), issuer).toMatch(/issuer: must not contain a query or fragment/);
    }
  });

  it('a loopback http issuer while listening on every interface is refused; on loopback (the compose stack) it starts', () => {
    for (const host of ['0.0.0.0', '::']) {
      const { problems } = loadConfig({ ...production, AS_HOST: host, AS_ISSUER: 'http://localhost:9000' });
      expect(problems.join('\n'), host).toMatch(
        new RegExp(
          `issuer: the http issuer http://localhost:9000 is refused in production while the server listens on ${host.replace(/\./g, '\\.')}`,
        ),
      );
    }
    expect(loadConfig({ ...production, AS_HOST: '127.0.0.1', AS_ISSUER: 'http://localhost:9000' }).problems).toEqual([]);
    expect(loadConfig({ ...production, AS_HOST: '0.0.0.0', AS_ISSUER: 'https://auth.example.com' }).problems).toEqual([]);
  });

  it('the real entry exits 1 for the loopback http issuer on 0.0.0.0 in production', async () => {
    const run = await runMain({ ...production, AS_HOST: '0.0.0.0' });
    expect(run.started, run.output).toBe(false);
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/issuer: the http issuer http:\/\/localhost:\d+ is refused in production/);
  }, 30_000);
});

describe('docker-compose.yml: the demo stack is reachable from this machine only', () => {
  interface Service {
    ports?: string[];
    environment?: Record<string, string>;
  }
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };

  it('every published port is bound to 127.0.0.1 on the host', () => {
    const published = Object.values(compose.services).flatMap((s) => s.ports ?? []);
    expect(published.length).toBeGreaterThan(0);
    for (const port of published) expect(port).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
  });

  it('no service turns a dev switch on (no demo user by default)', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const sw of APP_DEV_SWITCHES) if (sw.env) expect(service.environment ?? {}, name).not.toHaveProperty(sw.env);
    }
  });
});
