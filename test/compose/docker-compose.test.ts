/**
 * No Docker engine runs here: this parses docker-compose.yml (and the Dockerfile it builds)
 * and checks them against the runtime contract in DESIGN.md.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

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

const compose = parse(readFileSync(resolve(root, 'docker-compose.yml'), 'utf8')) as Compose;
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

describe('docker-compose.yml', () => {
  it('has exactly the services auth-server, postgres and demo-mcp-server', () => {
    expect(Object.keys(services).sort()).toEqual(['auth-server', 'demo-mcp-server', 'postgres']);
  });

  it('auth-server: runtime-contract env (AS_PORT, AS_ISSUER, DATABASE_URL, MCP_RESOURCE) with contract defaults', () => {
    const env = services['auth-server']!.environment!;
    for (const name of ['AS_PORT', 'AS_ISSUER', 'DATABASE_URL', 'MCP_RESOURCE']) expect(env, name).toHaveProperty(name);
    expect(env.AS_PORT).toBe('9000');
    expect(expandDefaults(env.AS_ISSUER!)).toBe('http://localhost:9000');
    expect(expandDefaults(env.MCP_RESOURCE!)).toBe('http://localhost:3000/mcp');
    const db = new URL(expandDefaults(env.DATABASE_URL!));
    expect(db.protocol).toBe('postgres:');
    expect(db.hostname, 'reaches the postgres service by name').toBe('postgres');
    expect(db.pathname).toBe(`/${services.postgres!.environment!.POSTGRES_DB}`);
    expect(db.username).toBe(services.postgres!.environment!.POSTGRES_USER);
    expect(services['auth-server']!.ports).toContain('9000:9000');
    // The image runs in production mode, which seeds no demo user unless asked.
    expect(expandDefaults(env.AS_DEMO_USER!)).toBe('1');
  });

  it('demo-mcp-server: runtime-contract env (MCP_PORT, MCP_RESOURCE, AS_ISSUER) agreeing with auth-server', () => {
    const env = services['demo-mcp-server']!.environment!;
    const asEnv = services['auth-server']!.environment!;
    for (const name of ['MCP_PORT', 'MCP_RESOURCE', 'AS_ISSUER']) expect(env, name).toHaveProperty(name);
    expect(env.MCP_PORT).toBe('3000');
    expect(env.AS_ISSUER, 'the MCP server trusts the issuer the AS uses').toBe(asEnv.AS_ISSUER);
    expect(env.MCP_RESOURCE, 'the AS issues tokens for the resource the MCP server is').toBe(asEnv.MCP_RESOURCE);
    expect(new URL(expandDefaults(env.MCP_RESOURCE!)).port).toBe(env.MCP_PORT);
  });

  it('the demo server reaches the issuer at the same URL as the browser (shared network namespace, port published)', () => {
    const demo = services['demo-mcp-server']!;
    expect(demo.network_mode).toBe('service:auth-server');
    expect(demo.ports, 'a service in another namespace cannot publish ports').toBeUndefined();
    expect(services['auth-server']!.ports).toContain('3000:3000');
    // Published ports only reach servers bound beyond loopback.
    expect(services['auth-server']!.environment!.AS_HOST).toBe('0.0.0.0');
    expect(demo.environment!.MCP_HOST).toBe('0.0.0.0');
  });

  it('postgres: named volume for its data and a pg_isready health check', () => {
    const pg = services.postgres!;
    expect(pg.image).toMatch(/^postgres:\d+/);
    const volume = pg.volumes?.find((v) => v.endsWith(':/var/lib/postgresql/data'));
    expect(volume).toBeDefined();
    const name = volume!.split(':')[0]!;
    expect(compose.volumes).toHaveProperty(name);
    expect(healthcheckCommand(pg)).toMatch(/pg_isready/);
    expect(pg.environment!.POSTGRES_PASSWORD, 'overridable, not a hard-coded secret').toMatch(/^\$\{POSTGRES_PASSWORD:-/);
  });

  it('health checks: auth-server probes its readiness (store included), demo-mcp-server its /healthz, on the container ports', () => {
    expect(healthcheckCommand(services['auth-server']!)).toContain('http://127.0.0.1:9000/readyz');
    expect(healthcheckCommand(services['demo-mcp-server']!)).toContain('http://127.0.0.1:3000/healthz');
    for (const s of Object.values(services)) expect(s.healthcheck?.retries).toBeGreaterThan(0);
  });

  it('start order: auth-server waits for healthy postgres, demo-mcp-server for healthy auth-server', () => {
    expect(services['auth-server']!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(services['demo-mcp-server']!.depends_on).toEqual({ 'auth-server': { condition: 'service_healthy' } });
  });

  it('both apps run the built entry points from one locally built image', () => {
    const as = services['auth-server']!;
    const demo = services['demo-mcp-server']!;
    expect(as.build).toBe('.');
    expect(demo.image).toBe(as.image);
    expect(as.command).toEqual(['node', 'apps/auth-server/dist/main.js']);
    expect(demo.command).toEqual(['node', 'apps/demo-mcp-server/dist/main.js']);
    expect(existsSync(resolve(root, 'apps/auth-server/src/main.ts'))).toBe(true);
    expect(existsSync(resolve(root, 'apps/demo-mcp-server/src/main.ts'))).toBe(true);
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
