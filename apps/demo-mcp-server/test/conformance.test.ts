import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoServer, type DemoServer } from '../src/index.js';
import { startFakeAuthorizationServer, type FakeAuthorizationServer } from './helpers/fake-as.js';
import { node22, unavailableNode22 } from '../../../test/helpers/node22.js';

// The official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) against
// the demo endpoint. The suite sends no token, so a loopback proxy plays a client holding one: it
// adds `Authorization` and presents its own loopback Host/Origin as the demo's (foreign ones pass
// unchanged, so the DNS-rebinding rejection is still exercised).
const root = fileURLToPath(new URL('../../../', import.meta.url));
const cli = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const node = await node22();
const available = !unavailableNode22('the conformance CLI (server scenarios)', node) && existsSync(cli);

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

let as: FakeAuthorizationServer;
let demo: DemoServer;
let proxy: Server;
let proxyUrl: string;
const outputDirs: string[] = [];

function startTokenProxy(target: number, token: string): Promise<Server> {
  const server = createServer((req, res) => {
    const own = (server.address() as AddressInfo).port;
    const mapLoopback = (value: string | undefined) =>
      value?.replace(new RegExp(`^((?:https?://)?(?:localhost|127\\.0\\.0\\.1|\\[::1\\])):${own}$`), `$1:${target}`);
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    if (headers.host) headers.host = mapLoopback(headers.host);
    if (headers.origin) headers.origin = mapLoopback(headers.origin);
    const upstream = request({ host: '127.0.0.1', port: target, path: req.url, method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function runScenario(scenario: string): Promise<Check[]> {
  const out = mkdtempSync(join(tmpdir(), 'demo-conformance-'));
  outputDirs.push(out);
  return new Promise((resolve, reject) => {
    execFile(node.path!, [cli, 'server', '--url', proxyUrl, '--scenario', scenario, '-o', out], { timeout: 60_000 }, (error) => {
      const dirs = readdirSync(out);
      if (dirs.length === 0) return reject(error ?? new Error(`no results for ${scenario}`));
      resolve(JSON.parse(readFileSync(join(out, dirs[0]!, 'checks.json'), 'utf8')) as Check[]);
    });
  });
}

function failures(checks: Check[]): Check[] {
  return checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
}

describe.skipIf(!available)('MCP conformance suite, server scenarios, against the protected demo endpoint', () => {
  beforeAll(async () => {
    as = await startFakeAuthorizationServer();
    demo = await startDemoServer({ port: 0, host: '127.0.0.1', issuer: as.issuer });
    const token = await as.sign({ aud: demo.resource, scope: 'notes:read notes:write', expiresIn: 600 });
    proxy = await startTokenProxy(demo.port, token);
    proxyUrl = `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => {
      if (!proxy) return resolve();
      proxy.close(() => resolve());
      proxy.closeAllConnections();
    });
    await demo?.close();
    await as?.close();
    for (const dir of outputDirs) rmSync(dir, { recursive: true, force: true });
  });

  it.each(['server-initialize', 'tools-list', 'http-header-validation', 'dns-rebinding-protection'])(
    '%s: every check passes',
    async (scenario) => {
      const checks = await runScenario(scenario);
      expect(checks.length).toBeGreaterThan(0);
      expect(failures(checks)).toEqual([]);
    },
    90_000,
  );

  it('server-stateless (2026-07-28): every check passes except those needing the suite’s own fixture tools', async () => {
    const checks = await runScenario('server-stateless');
    const passed = checks.filter((check) => check.status === 'SUCCESS').map((check) => check.id);
    expect(passed).toEqual(
      expect.arrayContaining([
        'sep-2575-request-meta-invalid-missing-meta',
        'sep-2575-server-implements-discover',
        'sep-2575-server-unsupported-version-error',
        'sep-2575-http-server-header-mismatch-400',
        'sep-2575-http-server-method-not-found-404-initialize',
        'sep-2575-http-server-error-jsonrpc-id',
      ]),
    );
    for (const check of failures(checks)) {
      expect(check.errorMessage, check.id).toMatch(/^Not testable: server does not list the diagnostic tool/);
    }
  }, 90_000);
});
