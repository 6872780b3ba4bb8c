/**
 * Case 4 — the whole first contact, from the first 401 to the first tool result, against one
 * stack (our AS with DEV_AUTO_LOGIN + the demo MCP server as shipped): our client library vs the
 * MCP SDK's own OAuth client, driven through the same SDK client generation. Each run starts
 * from nothing (no registration, no tokens, fresh cookie jar). Requests are counted at the
 * servers; the headless user agent's front-channel hops are counted apart.
 */
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createDemoApp } from '@mcp-auth-kit/demo-mcp-server';
import { McpAuthClient, MemoryStore, createAuthFetch } from '@mcp-auth-kit/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError as UnauthorizedV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedV2,
} from '@modelcontextprotocol/client';
import { startBenchAs } from '../lib/as.mjs';
import { closeAll, listen } from '../lib/servers.mjs';
import { shuffledOrder } from '../lib/order.mjs';
import { UserAgent } from '../lib/user-agent.mjs';

/**
 * The MCP SDK's OAuthClientProvider shape (v1 and v2 share it) with a headless browser, used as
 * a host application uses it: the host runs the loopback listener the
 * authorization response is redirected to (as the SDK's own example client does), the browser
 * delivers the code there, and the host hands it to `finishAuth`. Our client lib does the same
 * inside `McpAuthClient`, so both arms pay for the same hops.
 */
class HeadlessProvider {
  redirectUrl;
  #server;
  #received;
  ua = new UserAgent();
  callback;
  #client;
  #tokens;
  #verifier = '';
  #discovery;
  get clientMetadata() {
    return {
      client_name: 'bench SDK client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens) {
    this.#tokens = tokens;
  }
  /** Starts the loopback listener (port 0) whose `/callback` is the redirect URI. */
  static async open() {
    const provider = new HeadlessProvider();
    let deliver;
    provider.#received = new Promise((resolve) => {
      deliver = resolve;
    });
    provider.#server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', provider.redirectUrl);
      if (url.pathname !== '/callback') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<p>Signed in. You can close this tab.</p>');
      deliver(url);
    });
    await new Promise((resolve) => provider.#server.listen(0, '127.0.0.1', resolve));
    provider.redirectUrl = `http://127.0.0.1:${provider.#server.address().port}/callback`;
    return provider;
  }
  async redirectToAuthorization(url) {
    try {
      await this.ua.follow(url, this.redirectUrl, { deliver: true });
      this.callback = await this.#received;
    } finally {
      // one authorization response per listener, as our client lib's loopback listener
      await new Promise((resolve) => this.#server.close(() => resolve()));
    }
  }
  saveCodeVerifier(verifier) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  saveDiscoveryState(state) {
    this.#discovery = state;
  }
  discoveryState() {
    return this.#discovery;
  }
}

/** `dpop`: the client's `dpop` option ('auto': on, as the demo server and our AS announce it). */
function ourAuthClient(dpop = 'auto') {
  const ua = new UserAgent();
  let delivery;
  const auth = new McpAuthClient({
    clientName: 'bench client',
    store: new MemoryStore(),
    dpop,
    openAuthorizationUrl: async (url) => {
      // Like a browser tab: the callback reaches the client's loopback listener on its own.
      delivery = ua.follow(url, url.searchParams.get('redirect_uri'), { deliver: true });
      delivery.catch(() => {});
    },
  });
  return { auth, delivered: () => delivery };
}

function checkResult(result, label) {
  const text = JSON.stringify(result);
  if (result?.isError || !text.includes('\\"sub\\"') || !text.includes('notes:read')) {
    throw new Error(`${label}: whoami did not return the caller: ${text.slice(0, 200)}`);
  }
}

async function oursV1(url, dpop) {
  const { auth } = ourAuthClient(dpop);
  const client = new ClientV1({ name: 'bench', version: '1.0.0' });
  await client.connect(new TransportV1(new URL(url), { fetch: createAuthFetch(auth) }));
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  await client.close();
  return result;
}

async function oursV2(url, dpop, clientOptions) {
  const { auth } = ourAuthClient(dpop);
  const client = new ClientV2({ name: 'bench', version: '1.0.0' }, clientOptions);
  await client.connect(new TransportV2(new URL(url), { fetch: createAuthFetch(auth) }));
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  await client.close();
  return result;
}

// "our client lib" arms run with DPoP on (the client's default against this stack); the
// "(DPoP off)" arms are the same with `dpop: 'never'`: the SDK's OAuth has no DPoP, so they are
// the like-for-like comparison, and on / off is DPoP's own cost.
const arms = {
  'SDK v1 client + our client lib': (url) => oursV1(url, 'auto'),
  'SDK v1 client + our client lib (DPoP off)': (url) => oursV1(url, 'never'),
  'SDK v1 client + SDK v1 OAuth': async (url) => {
    const provider = await HeadlessProvider.open();
    const first = new ClientV1({ name: 'bench', version: '1.0.0' });
    const transport = new TransportV1(new URL(url), { authProvider: provider });
    try {
      await first.connect(transport);
      throw new Error('SDK v1: connected without authorization');
    } catch (error) {
      if (!(error instanceof UnauthorizedV1)) throw error;
    }
    await transport.finishAuth(provider.callback.searchParams.get('code'));
    await first.close().catch(() => {});
    const client = new ClientV1({ name: 'bench', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(url), { authProvider: provider }));
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    await client.close();
    return result;
  },
  'SDK v2 client + our client lib': (url) => oursV2(url, 'auto', undefined),
  'SDK v2 client + our client lib (DPoP off)': (url) => oursV2(url, 'never', undefined),
  'SDK v2 client + SDK v2 OAuth': (url) => sdkV2Flow(url, undefined),
  'SDK v2 client (2026-07-28) + our client lib': (url) => oursV2(url, 'auto', MODERN),
  'SDK v2 client (2026-07-28) + our client lib (DPoP off)': (url) => oursV2(url, 'never', MODERN),
  'SDK v2 client (2026-07-28) + SDK v2 OAuth': (url) => sdkV2Flow(url, MODERN),
};

/** Pins the SDK v2 client to the stateless 2026-07-28 wire (no initialize handshake). */
const MODERN = { versionNegotiation: { mode: { pin: '2026-07-28' } } };

async function sdkV2Flow(url, clientOptions) {
  const provider = await HeadlessProvider.open();
  const first = new ClientV2({ name: 'bench', version: '1.0.0' }, clientOptions);
  const transport = new TransportV2(new URL(url), { authProvider: provider });
  try {
    await first.connect(transport);
    await first.callTool({ name: 'whoami', arguments: {} });
    throw new Error('SDK v2: called a tool without authorization');
  } catch (error) {
    if (!(error instanceof UnauthorizedV2)) throw error;
  }
  await transport.finishAuth(provider.callback.searchParams);
  await first.close().catch(() => {});
  const client = new ClientV2({ name: 'bench', version: '1.0.0' }, clientOptions);
  await client.connect(new TransportV2(new URL(url), { authProvider: provider }));
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  await client.close();
  return result;
}

export async function runFullFlow({ rounds, runsPerRound = 1 }) {
  const mcpListener = await listen();
  const resource = `${mcpListener.origin}/mcp`;
  const closers = [() => mcpListener.close()];
  try {
    const as = await startBenchAs({ resource });
    closers.push(() => as.close());
    const demo = createDemoApp({ resource, issuer: as.issuer });
    closers.push(() => demo.close());
    mcpListener.setHandler(demo.app);

    const names = Object.keys(arms);
    const rows = [];
    for (const name of names) {
      rows.push({ label: `${name}: requests`, unit: 'count', values: [] });
      rows.push({ label: `${name}: client requests`, unit: 'count', values: [] });
      rows.push({ label: `${name}: wall time`, unit: 'ms', values: [] });
      rows.push({ label: `${name}: CPU`, unit: 'ms', values: [] });
    }
    const breakdown = new Map();
    // Warm-up run of every arm: the demo server's middleware fetches the AS metadata and JWKS on
    // the first token it sees; those requests belong to neither client.
    for (const name of names) checkResult(await arms[name](resource), name);
    // Runs are interleaved across the arms (one run of each arm, then the next), not run in blocks
    // of one arm: on a shared VM the machine's speed drifts over a fraction of a second, and a
    // block of one arm would catch a fast or a slow spell alone. Each run has a new order of the
    // arms (lib/order.mjs): in a fixed cycle the DPoP-off arm of our client always ran after the
    // DPoP-on arm, the heaviest, and paid for what it left behind.
    for (let round = 0; round < rounds; round++) {
      const sums = names.map(() => [0, 0, 0, 0]);
      for (let run = 0; run < runsPerRound; run++) {
        for (const i of shuffledOrder(names.length, round * runsPerRound + run)) {
          as.listener.resetCounts();
          mcpListener.resetCounts();
          const start = performance.now();
          const cpu = process.cpuUsage();
          const result = await arms[names[i]](resource);
          const used = process.cpuUsage(cpu);
          sums[i][2] += performance.now() - start;
          sums[i][3] += (used.user + used.system) / 1000;
          checkResult(result, names[i]);
          const clientRequests = as.listener.counts.client + mcpListener.counts.client;
          sums[i][0] += clientRequests + as.listener.counts.userAgent + mcpListener.counts.userAgent;
          sums[i][1] += clientRequests;
          if (process.env.BENCH_VERBOSE) {
            process.stderr.write(`${names[i]}:\n  MCP: ${mcpListener.log.join(', ')}\n  AS: ${as.listener.log.join(', ')}\n`);
          }
          breakdown.set(
            names[i],
            `MCP server ${mcpListener.counts.client}, AS back-channel ${as.listener.counts.client}, browser → AS ${as.listener.counts.userAgent}`,
          );
        }
      }
      for (const [i, sum] of sums.entries()) for (let m = 0; m < 4; m++) rows[4 * i + m].values[round] = sum[m] / runsPerRound;
    }
    const pairs = [
      ['v1', 'SDK v1 client + our client lib', 'SDK v1 client + SDK v1 OAuth'],
      ['v2', 'SDK v2 client + our client lib', 'SDK v2 client + SDK v2 OAuth'],
      ['v2 2026-07-28', 'SDK v2 client (2026-07-28) + our client lib', 'SDK v2 client (2026-07-28) + SDK v2 OAuth'],
    ];
    const ratios = [];
    for (const [gen, ours, sdk] of pairs) {
      const off = `${ours} (DPoP off)`;
      ratios.push({ label: `${gen}: ours / SDK requests`, of: [`${ours}: requests`, `${sdk}: requests`], target: { op: '<=', value: 1 } });
      ratios.push({ label: `${gen}: ours / SDK client requests`, of: [`${ours}: client requests`, `${sdk}: client requests`] });
      ratios.push({ label: `${gen}: ours / SDK wall time`, of: [`${ours}: wall time`, `${sdk}: wall time`] });
      ratios.push({
        label: `${gen}: ours DPoP off / SDK requests`,
        of: [`${off}: requests`, `${sdk}: requests`],
        target: { op: '<=', value: 1 },
      });
      ratios.push({
        label: `${gen}: ours DPoP off / SDK wall time`,
        of: [`${off}: wall time`, `${sdk}: wall time`],
        target: { op: '<=', value: 1 },
      });
      ratios.push({ label: `${gen}: ours DPoP off / SDK CPU`, of: [`${off}: CPU`, `${sdk}: CPU`] });
      ratios.push({ label: `${gen}: DPoP's own cost, ours on / off wall time`, of: [`${ours}: wall time`, `${off}: wall time`] });
      ratios.push({ label: `${gen}: DPoP's own cost, ours on / off CPU`, of: [`${ours}: CPU`, `${off}: CPU`] });
    }
    return {
      title: `4. full flow — first 401 to first tools/call result (whoami), fresh client each run, ${rounds} rounds × ${runsPerRound} run(s) per arm (mean), runs interleaved across arms`,
      notes: [
        'requests = every HTTP request the AS and MCP server received (client + headless browser); client requests = without the browser hops.',
        'Both arms of a pair use the same SDK client and wire: default negotiation (2025-11-25 initialize), or pinned to the 2026-07-28 stateless wire.',
        'CPU = CPU time of this process during the run (client, AS and MCP server all run here), steadier than wall time on a shared machine.',
        'Our client lib runs with DPoP on (its default against this stack: the AS and the demo server announce it) and off (dpop: never); the SDK has no DPoP.',
        ...[...breakdown].map(([name, text]) => `last run, ${name}: ${text}`),
      ],
      rows,
      ratios,
    };
  } finally {
    await closeAll(closers);
  }
}
