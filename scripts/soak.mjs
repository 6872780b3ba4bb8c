#!/usr/bin/env node
// Soak test of the demo stack (`npm run soak`): TWO authorization server instances on one
// PostgreSQL schema behind a loopback round-robin balancer (one issuer), the demo MCP server,
// and many complete OAuth flows run concurrently — DCR → authorize (PKCE S256, DEV_AUTO_LOGIN)
// → token → MCP tool calls (token validation) → refresh (rotation) → MCP call with the new
// token. Loopback only. The schema is created for the run and dropped afterwards.
//
//   node scripts/soak.mjs [--flows 2000] [--concurrency 50] [--validations 5] [--duration 300]
//                         [--database-url postgres://postgres@127.0.0.1:5432/test]
//
// --duration (seconds) repeats rounds of --flows until the time is up. Exit code 1 when any
// flow failed. `runSoak(options)` is exported for the CI-sized test in test/load/.
import { randomBytes } from 'node:crypto';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { HeadlessBrowser, freePort, pkcePair } from '@mcp-auth-kit/test-utils';
import { startAuthServer } from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { startDemoServer } from '@mcp-auth-kit/demo-mcp-server';

const REDIRECT_URI = 'http://127.0.0.1/callback';

/** Round-robin HTTP balancer on loopback: every request goes to the next instance. */
async function startBalancer(port) {
  const targets = [];
  const counts = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let next = 0;
  const server = createServer((req, res) => {
    if (targets.length === 0) return void res.writeHead(503).end();
    const index = next++ % targets.length;
    counts[index]++;
    const target = targets[index];
    const upstream = httpRequest(
      { host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers, agent },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    add(targetPort) {
      targets.push(targetPort);
      counts.push(0);
    },
    counts,
    async close() {
      server.closeAllConnections();
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function json(res) {
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text), text };
  } catch {
    return { status: res.status, body: {}, text };
  }
}

function form(url, fields) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  }).then(json);
}

async function callWhoami(mcpUrl, token) {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
  });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('"result"')) throw new Error(`MCP call answered ${res.status}`);
}

/** One complete flow; throws with the failing step. Returns the number of token validations. */
async function oneFlow(env, validations) {
  const { metadata, mcpUrl } = env;
  let step = 'register';
  try {
    const reg = await fetch(metadata.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'soak',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    }).then(json);
    if (reg.status !== 201) throw new Error(`HTTP ${reg.status}`);
    const clientId = reg.body.client_id;

    step = 'authorize';
    const { verifier, challenge } = pkcePair();
    const state = randomBytes(8).toString('hex');
    const start = new URL(metadata.authorization_endpoint);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      scope: 'notes:read',
      state,
      resource: mcpUrl,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }))
      start.searchParams.set(k, v);
    const issuerOrigin = new URL(metadata.issuer).origin;
    const callback = await new HeadlessBrowser().followToCallback(start, (url) => url.origin !== issuerOrigin);
    const code = callback.searchParams.get('code');
    if (!code || callback.searchParams.get('state') !== state || callback.searchParams.get('iss') !== metadata.issuer) {
      throw new Error(`bad callback ${callback.searchParams.get('error') ?? ''}`);
    }

    step = 'token';
    const tokens = await form(metadata.token_endpoint, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: mcpUrl,
    });
    if (tokens.status !== 200) throw new Error(`HTTP ${tokens.status} ${tokens.body.error ?? ''}`);

    step = 'validate';
    for (let i = 0; i < validations; i++) await callWhoami(mcpUrl, tokens.body.access_token);

    step = 'refresh';
    const refreshed = await form(metadata.token_endpoint, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: clientId,
      resource: mcpUrl,
    });
    if (refreshed.status !== 200 || refreshed.body.refresh_token === tokens.body.refresh_token)
      throw new Error(`HTTP ${refreshed.status} ${refreshed.body.error ?? ''}`);

    step = 'validate-refreshed';
    await callWhoami(mcpUrl, refreshed.body.access_token);
    return validations + 1;
  } catch (error) {
    throw new Error(`${step}: ${error.message}`);
  }
}

function memory() {
  globalThis.gc?.();
  const m = process.memoryUsage();
  return { heapUsedMB: +(m.heapUsed / 1048576).toFixed(1), rssMB: +(m.rss / 1048576).toFixed(1) };
}

/**
 * Runs the soak and returns its numbers. Everything listens on 127.0.0.1 with ephemeral ports.
 * @param {{ flows?: number, concurrency?: number, validations?: number, durationSeconds?: number,
 *   databaseUrl?: string, instances?: number, log?: (line: string) => void }} options
 */
export async function runSoak(options = {}) {
  const flows = options.flows ?? 40;
  const concurrency = options.concurrency ?? flows;
  const validations = options.validations ?? 5;
  const instances = options.instances ?? 2;
  const log = options.log ?? ((line) => process.stdout.write(`[soak] ${line}\n`));
  const baseUrl = options.databaseUrl ?? process.env.SOAK_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `soak_${randomBytes(4).toString('hex')}`;
  const dbUrl = `${baseUrl}${baseUrl.includes('?') ? '&' : '?'}application_name=mcp-auth-kit-${schema}`;

  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const servers = [];
  let balancer;
  let mcp;
  try {
    const balancerPort = await freePort();
    const issuer = `http://localhost:${balancerPort}`;
    const mcpPort = await freePort();
    const resource = `http://localhost:${mcpPort}/mcp`;
    balancer = await startBalancer(balancerPort);
    // Sequential start: the first instance migrates the schema and creates the signing keys.
    for (let i = 0; i < instances; i++) {
      const as = await startAuthServer({
        port: 0,
        host: '127.0.0.1',
        issuer,
        resource,
        devAutoLogin: 'demo',
        storage: { kind: 'postgres', url: dbUrl, schema },
        logger: silentLogger,
        authorizationServer: { registration: { rateLimit: false } },
      });
      servers.push(as);
      balancer.add(as.port);
    }
    mcp = await startDemoServer({ port: mcpPort, host: '127.0.0.1', resource, issuer, onError: () => {} });
    const metadata = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json();
    const env = { metadata, mcpUrl: mcp.url };

    log(`${instances} AS instances on PostgreSQL schema ${schema} behind ${issuer}; MCP at ${mcp.url}`);
    const before = memory();
    const started = Date.now();
    const deadline = options.durationSeconds ? started + options.durationSeconds * 1000 : 0;
    const failures = [];
    let completed = 0;
    let validated = 0;
    let rounds = 0;
    do {
      let next = 0;
      const worker = async () => {
        while (next < flows) {
          next++;
          try {
            const count = await oneFlow(env, validations);
            validated += count;
            completed++;
          } catch (error) {
            failures.push(error.message);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, flows) }, worker));
      rounds++;
      if (deadline) log(`round ${rounds}: ${completed} flows ok, ${failures.length} failed, ${memory().heapUsedMB} MB heap`);
    } while (deadline && Date.now() < deadline);
    const durationMs = Date.now() - started;
    const after = memory();
    const result = {
      instances,
      schema,
      rounds,
      flows: completed + failures.length,
      completed,
      failed: failures.length,
      failures: failures.slice(0, 20),
      tokenValidations: validated,
      durationMs,
      flowsPerSecond: +((completed / durationMs) * 1000).toFixed(1),
      requestsPerInstance: [...balancer.counts],
      memory: { before, after },
    };
    log(
      `${result.flows} flows (${concurrency} concurrent) in ${(durationMs / 1000).toFixed(1)} s: ${completed} ok, ${failures.length} failed, ` +
        `${validated} token validations, ${result.flowsPerSecond} flows/s; AS requests per instance ${result.requestsPerInstance.join(' / ')}; ` +
        `heapUsed ${before.heapUsedMB} → ${after.heapUsedMB} MB, RSS ${before.rssMB} → ${after.rssMB} MB`,
    );
    return result;
  } finally {
    await mcp?.close().catch(() => {});
    for (const as of servers) await as.close().catch(() => {});
    await balancer?.close().catch(() => {});
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end().catch(() => {});
  }
}

function parseArgs(argv) {
  const options = {};
  const names = {
    '--flows': 'flows',
    '--concurrency': 'concurrency',
    '--validations': 'validations',
    '--duration': 'durationSeconds',
    '--instances': 'instances',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--database-url') options.databaseUrl = argv[++i];
    else if (names[arg]) {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value < 1) throw new Error(`${arg} needs a positive integer`);
      options[names[arg]] = value;
    } else if (arg === '--help' || arg === '-h') {
      process.stdout.write(
        'usage: node scripts/soak.mjs [--flows N] [--concurrency N] [--validations N] [--duration SECONDS] [--instances N] [--database-url URL]\n',
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  return { flows: 200, concurrency: 50, ...options };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    const result = await runSoak(parseArgs(process.argv.slice(2)));
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.exit(result.failed === 0 ? 0 : 1);
  } catch (error) {
    process.stderr.write(`[soak] ${error.message}\n`);
    process.exit(1);
  }
}
