/**
 * Case 1 — resource-server overhead. One loopback server, one token, one MCP handler (the demo
 * server's tools on the SDK's stateless handler); only the auth layer in front of it changes
 * between variants, and variants are interleaved within each round.
 */
import express from 'express';
import helmet from 'helmet';
import { createRemoteJWKSet, jwtVerify, decodeJwt } from 'jose';
import { createResourceServer } from '@mcp-auth-kit/resource-server';
import { createDemoApp, createNotesMcpServer, NotesStore } from '@mcp-auth-kit/demo-mcp-server';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { startBenchAs } from '../lib/as.mjs';
import { closeAll, listen } from '../lib/servers.mjs';
import { runAutocannon } from '../lib/load.mjs';
import { shuffledOrder } from '../lib/order.mjs';

const VERSION = '2026-07-28';
const TOOL = 'whoami';

function toolsCallRequest(token) {
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': TOOL,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: TOOL,
        arguments: {},
        _meta: {
          'io.modelcontextprotocol/protocolVersion': VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  };
}

/**
 * Reads and parses the JSON body the way our middleware does after its token check (chunks,
 * one JSON.parse), so the variants without it differ from ours by the auth work alone.
 */
function readJsonBody(req, res, next) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('error', next);
  req.on('end', () => {
    try {
      const raw = Buffer.concat(chunks);
      req.body = raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
      next();
    } catch {
      res.status(400).json({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    }
  });
}

/** The same express shell for every variant: helmet as in the demo app, auth layer, SDK handler. */
function appWith(authLayers, resourceMetadataUrl) {
  const store = new NotesStore();
  // Autocannon cuts connections at the end of a run ("aborted"), and requests still in flight
  // when the case shuts down find the handler closed: expected, not worth a line.
  const onError = (error) => {
    if (!/aborted|ECONNRESET|has been closed/i.test(error.message)) process.stderr.write(`bench mcp error: ${error.message}\n`);
  };
  const mcp = createMcpHandler(() => createNotesMcpServer(store), { legacy: 'stateless', onerror: onError });
  const mcpNode = toNodeHandler(mcp, { onerror: onError });
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet({ contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } } }));
  app.all('/mcp', ...authLayers, (req, res) => {
    if (req.auth) req.auth = { ...req.auth, resourceMetadataUrl: req.auth.resourceMetadataUrl ?? resourceMetadataUrl };
    mcpNode(req, res, req.body).catch((error) => {
      onError(error);
      if (!res.headersSent) res.status(500).end();
    });
  });
  return { app, close: () => mcp.close() };
}

/** A plain express JSON route (no MCP): what is left is the auth layer's own cost. */
function plainAppWith(authLayers) {
  const app = express();
  app.disable('x-powered-by');
  app.get('/mcp', ...authLayers, (req, res) => {
    res.json({ sub: req.auth?.extra?.sub, scopes: req.auth?.scopes });
  });
  return { app, close: async () => {} };
}

/**
 * Time spent in a middleware per request, from its call until it calls `next()` (the handler's
 * own work is not counted), in µs. For a cache hit on a GET route our middleware runs
 * synchronously, so this is its CPU time per request, measured in the running server under the
 * same load as the other rows; its two clock reads (≈ 0.1 µs) and closure run only in the slot
 * it is started for.
 */
function middlewareMeter(middleware) {
  let samples = [];
  let on = false;
  return {
    middleware(req, res, next) {
      if (!on) return middleware(req, res, next);
      // Node builds `req.headers` from the raw header lines on first use, and express's
      // res.send() uses it in every variant (req.fresh): built here, outside the clock, that
      // work is not charged to whichever middleware happens to read a header first.
      void req.headers;
      const start = performance.now();
      return middleware(req, res, (...args) => {
        samples.push((performance.now() - start) * 1000);
        next(...args);
      });
    },
    start() {
      samples = [];
      on = true;
    },
    /** Median and mean (µs) of the calls since `start`. */
    stop() {
      on = false;
      const sorted = Float64Array.from(samples).sort();
      const mean = sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1);
      return { median: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, mean, count: sorted.length };
    },
  };
}

/** `mode`: 'mcp' (case 1, the demo server's tools/call) or 'plain' (case 1b, a plain express GET route). */
export async function runRsOverhead({ rounds, duration, connections, tokenCount = connections, mode = 'mcp' }) {
  const plain = mode === 'plain';
  const server = await listen();
  const resource = `${server.origin}/mcp`;
  const as = await startBenchAs({ resource });
  const closers = [() => as.close(), () => server.close()];
  try {
    // One token per connection (same user, same client), the same set for every variant: a
    // single token would let "cache off" coalesce all concurrent verifications into one.
    const tokens = [];
    for (let i = 0; i < tokenCount; i++) tokens.push((await as.issueTokens('notes:read')).access_token);
    const token = tokens[0];
    const claims = decodeJwt(token);
    const resourceMetadataUrl = `${server.origin}/.well-known/oauth-protected-resource/mcp`;
    const policy = { default: ['notes:read'], tools: { add_note: ['notes:write'], list_notes: ['notes:read'] } };

    // Unprotected: the handler gets the caller the middleware would have produced, unverified.
    const staticAuth = {
      token,
      clientId: claims.client_id,
      scopes: String(claims.scope).split(' '),
      expiresAt: claims.exp,
      resource: new URL(resource),
      extra: { sub: claims.sub, iss: claims.iss },
    };
    const rsCache = createResourceServer({
      resource,
      authorizationServers: [as.issuer],
      scopesSupported: ['notes:read'],
      scopePolicy: policy,
    });
    const rsCold = createResourceServer({
      resource,
      authorizationServers: [as.issuer],
      scopesSupported: ['notes:read'],
      scopePolicy: policy,
      cache: false,
    });
    closers.push(
      () => rsCache.close(),
      () => rsCold.close(),
    );

    // The MCP SDK v1 recipe: requireBearerAuth with a jose verifier on the AS's remote JWKS.
    const jwks = createRemoteJWKSet(new URL(as.metadata.jwks_uri));
    const joseVerifier = {
      async verifyAccessToken(t) {
        const { payload } = await jwtVerify(t, jwks, { issuer: as.issuer, audience: resource, typ: 'at+jwt', algorithms: ['ES256'] });
        return {
          token: t,
          clientId: payload.client_id,
          scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [],
          expiresAt: payload.exp,
          resource: new URL(resource),
          extra: { sub: payload.sub, iss: payload.iss },
        };
      },
    };

    // Our middleware parses the JSON body itself after the token check and hands it to the SDK;
    // the other variants get the same reader at the same place, so every variant parses once.
    const bodyReader = plain ? [] : [readJsonBody];
    // case 1b: our middleware's own time per cache hit, measured inside the server (see middlewareMeter)
    const hitMeter = middlewareMeter(rsCache.protect);
    const build = (layers) => (plain ? plainAppWith(layers) : appWith(layers, resourceMetadataUrl));
    const variants = [
      [
        'unprotected (same handler, fixed caller)',
        build([
          (req, _res, next) => {
            req.auth = staticAuth;
            next();
          },
          ...bodyReader,
        ]),
      ],
      ['ours, cache on', build([plain ? hitMeter.middleware : rsCache.protect])],
      ['ours, cache off', build([rsCold.protect])],
      [
        'SDK requireBearerAuth + jose',
        build([requireBearerAuth({ verifier: joseVerifier, requiredScopes: ['notes:read'], resourceMetadataUrl }), ...bodyReader]),
      ],
    ];
    if (!plain) {
      const demo = createDemoApp({ resource, issuer: as.issuer });
      variants.push(['demo app as shipped (cache on)', { app: demo.app, close: () => demo.close() }]);
    }
    for (const [, v] of variants) closers.push(v.close);

    const request = plain
      ? { method: 'GET', headers: { accept: 'application/json', authorization: `Bearer ${token}` } }
      : toolsCallRequest(token);
    // Each variant must answer the tool call correctly before it is measured.
    for (const [label, v] of variants) {
      server.setHandler(v.app);
      const res = await fetch(resource, request);
      const text = await res.text();
      if (res.status !== 200 || !text.includes(String(claims.sub)))
        throw new Error(`${label}: tools/call answered HTTP ${res.status}: ${text.slice(0, 200)}`);
      await runAutocannon({ url: resource, connections, duration: 1, ...request, bearerTokens: tokens });
    }

    const rows = variants.map(([label]) => ({ label, unit: 'req/s', values: [] }));
    // CPU time of this process (all its threads) per request: far less sensitive than req/s to
    // other processes taking the shared cores, since only our own work is counted.
    const cpuRows = variants.map(([label]) => ({ label: `${label}: CPU`, unit: 'µs/req', values: [] }));
    const hitRows = [
      {
        label: 'ours cache on: time in our middleware per request (in the server), median',
        unit: 'µs/req',
        values: [],
        target: { op: '<=', value: 10 },
      },
      { label: 'ours cache on: time in our middleware per request (in the server), mean', unit: 'µs/req', values: [] },
    ];
    for (let round = 0; round < rounds; round++) {
      // A new order every round, so no variant always runs first after a pause or always pays for
      // what the same other variant left behind (lib/order.mjs).
      const order = shuffledOrder(variants.length, round);
      for (const i of order) {
        server.setHandler(variants[i][1].app);
        const cpu = process.cpuUsage();
        const result = await runAutocannon({ url: resource, connections, duration, ...request, bearerTokens: tokens });
        const used = process.cpuUsage(cpu);
        rows[i].values[round] = result.rps;
        cpuRows[i].values[round] = (used.user + used.system) / result.total;
      }
      if (plain) {
        // The hit timing gets a slot of its own after the round's variants: its two clock reads
        // and closure per request are not charged to the cache-on req/s and CPU rows.
        server.setHandler(variants[1][1].app);
        hitMeter.start();
        await runAutocannon({ url: resource, connections, duration, ...request, bearerTokens: tokens });
        const { median, mean } = hitMeter.stop();
        hitRows[0].values[round] = median;
        hitRows[1].values[round] = mean;
      }
    }
    const [unprotected, cacheOn, cacheOff, sdk] = rows.map((r) => r.label);
    const [cpuUnprotected, cpuCacheOn, cpuCacheOff, cpuSdk] = cpuRows.map((r) => r.label);
    // What our middleware adds to a request whose token the cache answers, in CPU µs: the
    // same-round difference of the server's CPU per request with it and without any auth layer.
    const addedRows = [
      {
        label: 'CPU added per request: ours cache on − unprotected',
        unit: 'µs/req',
        values: cpuRows[1].values.map((v, i) => v - cpuRows[0].values[i]),
      },
      {
        label: 'CPU added per request: ours cache off − unprotected',
        unit: 'µs/req',
        values: cpuRows[2].values.map((v, i) => v - cpuRows[0].values[i]),
      },
      {
        label: 'CPU added per request: SDK + jose − unprotected',
        unit: 'µs/req',
        values: cpuRows[3].values.map((v, i) => v - cpuRows[0].values[i]),
      },
    ];
    return {
      title: plain
        ? `1b. resource-server overhead on a plain express GET route (no MCP), ${connections} connections, ${rounds} rounds × ${duration} s`
        : `1. resource-server overhead — tools/call "${TOOL}", ${VERSION} stateless wire, ${connections} connections, ${rounds} rounds × ${duration} s`,
      notes: [
        `One server; ${tokenCount} ES256 tokens from our AS, each connection keeping one, the same set for every variant; only the auth layer changes.`,
        '"unprotected" hands the handler a fixed caller without looking at the token.',
        'CPU rows: CPU time of the server process per request; "CPU: unprotected / X" reads like a throughput ratio (1 = free).',
        ...(plain
          ? [
              '"CPU added per request" rows: same-round differences of whole-process CPU per request; on a shared VM they move by tens of µs between rounds (see min / max), so they are printed without a target.',
              '"time in our middleware": measured inside the server around our middleware, from its call to its next() (a cache hit runs synchronously): what a hit costs, under the same load, in a slot of its own after each round (the clock reads are not charged to the other rows).',
            ]
          : []),
      ],
      rows: [...rows, ...cpuRows, ...(plain ? [...addedRows, ...hitRows] : [])],
      ratios: [
        { label: 'ours cache on / unprotected', of: [cacheOn, unprotected], target: { op: '>=', value: plain ? 0.95 : 0.97 } },
        { label: 'CPU: unprotected / ours cache on', of: [cpuUnprotected, cpuCacheOn] },
        { label: 'CPU: unprotected / ours cache off', of: [cpuUnprotected, cpuCacheOff] },
        { label: 'CPU: unprotected / SDK + jose', of: [cpuUnprotected, cpuSdk] },
        { label: 'ours cache off / unprotected', of: [cacheOff, unprotected] },
        { label: 'SDK + jose / unprotected', of: [sdk, unprotected] },
        { label: 'ours cache on / SDK + jose', of: [cacheOn, sdk] },
        // the cold middleware (every request verified) against the SDK's middleware + jose
        { label: 'ours cache off / SDK + jose', of: [cacheOff, sdk], ...(plain && { target: { op: '>=', value: 1 } }) },
        { label: 'CPU: SDK + jose / ours cache off', of: [cpuSdk, cpuCacheOff] },
        ...(plain ? [] : [{ label: 'demo as shipped / unprotected', of: [rows[4].label, unprotected] }]),
      ],
    };
  } finally {
    await closeAll(closers);
  }
}
