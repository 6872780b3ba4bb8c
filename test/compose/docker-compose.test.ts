/**
 * No Docker engine runs here: this parses docker-compose.yml (and the Dockerfile it builds)
 * and checks them against the runtime contract in DESIGN.md and against the scale-out topology
 * the multi-instance test starts (test/multi-instance/topology.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseRoutes } from '../../scripts/round-robin-proxy.mjs';
import { TOPOLOGY } from '../multi-instance/topology.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Service {
  image?: string;
  build?: string | { context: string };
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  network_mode?: string;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string; retries?: number };
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

// merge keys (`<<: *anchor`) as compose reads them
const compose = parse(readFileSync(resolve(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as Compose;
const { services } = compose;
const dockerfile = readFileSync(resolve(root, 'Dockerfile'), 'utf8');

/** A `${NAME:-default}` value as compose would expand it with NAME unset. */
function expandDefaults(value: string): string {
  return value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
}

function healthcheckCommand(service: Service): string {
  const test = service.healthcheck?.test ?? [];
  expect(['CMD', 'CMD-SHELL']).toContain(test[0]);
  return test.slice(1).join(' ');
}

const authServers = TOPOLOGY.authServers.map((name) => [name, services[name]!] as const);
const replicas = TOPOLOGY.mcpReplicas.map((name) => [name, services[name]!] as const);
const env = (service: Service) => service.environment ?? {};

describe('docker-compose.yml: the scale-out topology of the multi-instance test', () => {
  it('has exactly the services of test/multi-instance/topology.ts', () => {
    const expected = [...TOPOLOGY.authServers, ...TOPOLOGY.mcpReplicas, TOPOLOGY.postgres, TOPOLOGY.redis, TOPOLOGY.proxy];
    expect(Object.keys(services).sort()).toEqual(expected.sort());
  });

  it('authorization servers: one PostgreSQL schema and one Redis, the same settings on each', () => {
    const first = authServers[0]![1];
    for (const [name, as] of authServers) {
      expect(as.command, name).toEqual(['node', 'apps/auth-server/dist/main.js']);
      for (const key of TOPOLOGY.sharedAuthServerEnv) expect(env(as)[key], `${name} ${key}`).toBe(env(first)[key]);
    }
    const e = env(first);
    expect(expandDefaults(e.AS_ISSUER!)).toBe('http://localhost:9000');
    expect(expandDefaults(e.MCP_RESOURCE!)).toBe('http://localhost:3000/mcp');
    const db = new URL(expandDefaults(e.DATABASE_URL!));
    expect(db.protocol).toBe('postgres:');
    expect(db.hostname, 'reaches the postgres service by name').toBe(TOPOLOGY.postgres);
    expect(db.pathname).toBe(`/${services.postgres!.environment!.POSTGRES_DB}`);
    expect(db.username).toBe(services.postgres!.environment!.POSTGRES_USER);
    expect(new URL(e.REDIS_URL!).hostname, 'reaches the redis service by name').toBe(TOPOLOGY.redis);
    // The image runs in production mode, which refuses the demo user (a dev switch) anyway.
    expect(e).not.toHaveProperty('AS_DEMO_USER');
  });

  it('MCP replicas: one Redis and prefix with the authorization servers, trusting their issuer for their resource', () => {
    const asEnv = env(authServers[0]![1]);
    for (const [name, mcp] of replicas) {
      expect(mcp.command, name).toEqual(['node', 'apps/demo-mcp-server/dist/main.js']);
      for (const key of TOPOLOGY.sharedMcpEnv) expect(env(mcp)[key], `${name} ${key}`).toBe(asEnv[key]);
    }
  });

  it('the proxy balances the issuer port over every AS and the resource port over every replica, and publishes both', () => {
    const proxy = services[TOPOLOGY.proxy]!;
    expect(proxy.command).toEqual(['node', 'scripts/round-robin-proxy.mjs']);
    expect(existsSync(resolve(root, 'scripts/round-robin-proxy.mjs'))).toBe(true);
    const routes = new Map(parseRoutes(env(proxy).PROXY_ROUTES!).map((r) => [r.port, r.targets]));
    const issuerPort = Number(new URL(expandDefaults(env(authServers[0]![1]).AS_ISSUER!)).port);
    const resourcePort = Number(new URL(expandDefaults(env(authServers[0]![1]).MCP_RESOURCE!)).port);
    expect(routes.get(issuerPort)).toEqual(authServers.map(([, as]) => `http://127.0.0.1:${env(as).AS_PORT}`));
    expect(routes.get(resourcePort)).toEqual(replicas.map(([, mcp]) => `http://127.0.0.1:${env(mcp).MCP_PORT}`));
    // On the host, on 127.0.0.1 only: the issuer is plain http (issue 46 item 1).
    expect(proxy.ports).toEqual([`127.0.0.1:${issuerPort}:${issuerPort}`, `127.0.0.1:${resourcePort}:${resourcePort}`]);
    // Inside the container, published ports only reach servers bound beyond the container's loopback.
    expect(env(proxy).PROXY_HOST).toBe('0.0.0.0');
  });

  it('apps share the proxy network namespace: localhost:9000 is the balancer for the browser, each AS and each replica', () => {
    for (const [name, s] of [...authServers, ...replicas]) {
      expect(s.network_mode, name).toBe(`service:${TOPOLOGY.proxy}`);
      expect(s.ports, `${name}: a service in another namespace cannot publish ports`).toBeUndefined();
    }
    for (const [, as] of authServers) expect(env(as).AS_HOST).toBe('127.0.0.1');
    for (const [, mcp] of replicas) expect(env(mcp).MCP_HOST).toBe('127.0.0.1');
    const ports = [...authServers.map(([, as]) => env(as).AS_PORT), ...replicas.map(([, m]) => env(m).MCP_PORT)];
    expect(new Set(ports).size, 'one namespace: every app on its own port').toBe(ports.length);
  });

  it('no service publishes a port beyond 127.0.0.1 of the host, and none turns a dev switch on', () => {
    const devSwitchEnv = ['AS_DEMO_USER', 'DEV_AUTO_LOGIN', 'CIMD_ALLOW_PRIVATE_NETWORK'];
    for (const [name, s] of Object.entries(services)) {
      for (const port of s.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      for (const key of devSwitchEnv) expect(env(s), `${name} ${key}`).not.toHaveProperty(key);
    }
  });

  it('postgres: named volume for its data and a pg_isready health check; redis: keeps nothing on disk, redis-cli ping', () => {
    const pg = services.postgres!;
    expect(pg.image).toMatch(/^postgres:\d+/);
    const volume = pg.volumes?.find((v) => v.endsWith(':/var/lib/postgresql/data'));
    expect(volume).toBeDefined();
    const name = volume!.split(':')[0]!;
    expect(compose.volumes).toHaveProperty(name);
    expect(healthcheckCommand(pg)).toMatch(/pg_isready/);
    expect(pg.environment!.POSTGRES_PASSWORD, 'overridable, not a hard-coded secret').toMatch(/^\$\{POSTGRES_PASSWORD:-/);
    const redis = services.redis!;
    expect(redis.image).toMatch(/^redis:\d+/);
    expect(redis.command).toEqual(expect.arrayContaining(['--save', '', '--appendonly', 'no']));
    expect(healthcheckCommand(redis)).toMatch(/redis-cli ping/);
  });

  it("health checks on each app's own port: AS readiness (store included), replicas /healthz", () => {
    for (const [name, as] of authServers) expect(healthcheckCommand(as), name).toContain(`http://127.0.0.1:${env(as).AS_PORT}/readyz`);
    for (const [name, mcp] of replicas) expect(healthcheckCommand(mcp), name).toContain(`http://127.0.0.1:${env(mcp).MCP_PORT}/healthz`);
    for (const s of Object.values(services)) expect(s.healthcheck?.retries).toBeGreaterThan(0);
  });

  it('start order: AS instances wait for healthy postgres and redis; replicas for a healthy AS and redis', () => {
    for (const [name, as] of authServers) {
      expect(as.depends_on?.postgres?.condition, name).toBe('service_healthy');
      expect(as.depends_on?.redis?.condition, name).toBe('service_healthy');
      expect(as.depends_on?.[TOPOLOGY.proxy], name).toBeDefined();
    }
    for (const [name, mcp] of replicas) {
      expect(mcp.depends_on?.[TOPOLOGY.authServers[0]]?.condition, name).toBe('service_healthy');
      expect(mcp.depends_on?.redis?.condition, name).toBe('service_healthy');
    }
  });

  it('every app runs a built entry point from one locally built image', () => {
    const proxy = services[TOPOLOGY.proxy]!;
    expect(proxy.build).toBe('.');
    for (const [name, s] of [...authServers, ...replicas]) expect(s.image, name).toBe(proxy.image);
    expect(existsSync(resolve(root, 'apps/auth-server/src/main.ts'))).toBe(true);
    expect(existsSync(resolve(root, 'apps/demo-mcp-server/src/main.ts'))).toBe(true);
    expect(dockerfile.slice(dockerfile.lastIndexOf('FROM '))).toMatch(/^COPY scripts\/round-robin-proxy\.mjs scripts\/$/m);
  });
});

describe('Dockerfile', () => {
  const fromLines = dockerfile.split('\n').filter((l) => /^FROM /.test(l));

  it('is multi-stage on a Node version the kit supports', () => {
    expect(fromLines.length).toBeGreaterThanOrEqual(2);
    for (const line of fromLines) expect(line).toMatch(/^FROM node:(20|22)[.-]/);
  });

  it('installs with npm ci from the lock file and builds with npm run build', () => {
    expect(dockerfile).toMatch(/^COPY package\.json package-lock\.json/m);
    expect(dockerfile).toMatch(/^RUN npm ci$/m);
    expect(dockerfile).toMatch(/npm run build/);
  });

  it('copies the manifest of every npm workspace before npm ci (npm ci needs them all)', () => {
    const rootPkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { workspaces: string[] };
    const beforeCi = dockerfile.slice(0, dockerfile.indexOf('RUN npm ci'));
    for (const ws of rootPkg.workspaces) expect(beforeCi, ws).toContain(`COPY ${ws}/package.json ${ws}/`);
  });

  it('copies the sources of every project `npm run build` (tsc -b) builds before running it', () => {
    const refs = (JSON.parse(readFileSync(resolve(root, 'tsconfig.json'), 'utf8')) as { references: { path: string }[] }).references;
    const beforeBuild = dockerfile.slice(0, dockerfile.indexOf('npm run build'));
    const copied = [...beforeBuild.matchAll(/^COPY (\S+) \1$/gm)].map((m) => m[1]!);
    expect(beforeBuild).toMatch(/^COPY tsconfig\.base\.json tsconfig\.json/m);
    for (const { path } of refs) {
      expect(
        copied.some((dir) => path === dir || path.startsWith(`${dir}/`)),
        path,
      ).toBe(true);
    }
  });

  it('runs as the unprivileged node user', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
    expect(runtime).toMatch(/^USER node$/m);
  });
});
