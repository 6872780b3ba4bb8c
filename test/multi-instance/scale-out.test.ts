/**
 * Scale-out (issue 24): two authorization servers on one PostgreSQL schema and two demo MCP
 * replicas on one Redis, each pair behind a round-robin balancer on loopback (the topology of
 * docker-compose.yml, see ./topology.ts). Our client library runs the whole flow through the
 * balancers, so consecutive requests land on different instances; one AS is killed between the
 * authorization response and the token request and the flow completes on the other.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpAuthClient, MemoryStore, createAuthFetch, type StoredDpopKey } from '@mcp-auth-kit/client';
import { startAuthServer, type RunningAuthServer } from '@mcp-auth-kit/auth-server';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { startDemoServer, type DemoServer } from '@mcp-auth-kit/demo-mcp-server';
import { DEFAULT_REVOCATION_RESYNC_MS } from '@mcp-auth-kit/resource-server/redis';
import { importJWK, SignJWT, type JWK } from 'jose';
import { startRoundRobinProxy, type RoundRobinProxy } from '../../scripts/round-robin-proxy.mjs';
import { openPgScope, shouldRunPgTests, type PgScope } from '../faults/helpers/postgres.js';
import { inspectAccessToken } from '../helpers/jwt.js';
import { REDIS_URL, redisPrefix, shouldRunRedisTests } from '../helpers/redis.js';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { TOPOLOGY } from './topology.js';
import { isLoopbackCallback } from '../helpers/loopback.js';

const runs = (await shouldRunPgTests()) && (await shouldRunRedisTests());

describe.runIf(runs)('scale-out: 2 AS on PostgreSQL + 2 MCP replicas on Redis, each pair behind a round-robin balancer', () => {
  const redis = redisPrefix('scale-out');
  let pg: PgScope;
  let asProxy: RoundRobinProxy;
  let mcpProxy: RoundRobinProxy;
  const authServers: RunningAuthServer[] = [];
  const replicas: DemoServer[] = [];
  let issuer: string;
  let resource: string;
  let store: MemoryStore;
  let auth: McpAuthClient;
  /** Set by a test: the next authorization kills AS 1 between the redirect and the token request. */
  let killBeforeTokenRequest = false;
  let killed = false;
  /** Requests AS 1 had answered when it was killed. */
  let servedAtKill = 0;

  beforeAll(async () => {
    pg = await openPgScope('scale_out');
    asProxy = await startRoundRobinProxy();
    mcpProxy = await startRoundRobinProxy();
    issuer = asProxy.url;
    resource = `${mcpProxy.url}/mcp`;
    // one after the other: the first one migrates the fresh schema
    for (const _name of TOPOLOGY.authServers) {
      const as = await startAuthServer({
        port: 0,
        host: '127.0.0.1',
        issuer,
        resource,
        databaseUrl: pg.url,
        databaseSchema: pg.schema,
        redisUrl: REDIS_URL,
        redisPrefix: redis.prefix,
        devAutoLogin: 'demo',
        logger: silentLogger,
        shutdownTimeoutMs: 0,
      });
      authServers.push(as);
      asProxy.targets.push(as.url);
    }
    for (const _name of TOPOLOGY.mcpReplicas) {
      const mcp = await startDemoServer({
        port: 0,
        host: '127.0.0.1',
        resource,
        issuer,
        redisUrl: REDIS_URL,
        redisPrefix: redis.prefix,
        onError: () => {},
      });
      replicas.push(mcp);
      mcpProxy.targets.push(`http://127.0.0.1:${mcp.port}`);
    }
    store = new MemoryStore();
    const ua = new HeadlessBrowser();
    auth = new McpAuthClient({
      clientName: 'scale-out e2e',
      store,
      openAuthorizationUrl: async (url) => {
        const callback = await ua.followToCallback(url, isLoopbackCallback);
        if (killBeforeTokenRequest && !killed) {
          // mid-flow: the code is issued, the token request has not been sent yet
          await authServers[0]!.close();
          killed = true;
          servedAtKill = asProxy.served[0] ?? 0;
        }
        await (await fetch(callback)).arrayBuffer();
      },
    });
  });

  afterAll(async () => {
    for (const r of replicas) await r.close();
    for (const a of authServers) await a.close();
    await mcpProxy?.close();
    await asProxy?.close();
    await pg?.drop();
    await redis.drop();
  });

  const callTool = async (name: string, args: Record<string, unknown> = {}) => {
    const client = new Client({ name: 'scale-out', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(resource), { fetch: createAuthFetch(auth) }));
    try {
      return (await client.callTool({ name, arguments: args })) as { structuredContent?: Record<string, unknown>; isError?: boolean };
    } finally {
      await client.close();
    }
  };

  /** The client's DPoP key (RFC 9449), to sign proofs for requests sent to one replica directly. */
  const dpopKey = async (): Promise<StoredDpopKey> => {
    const key = await store.getDpopKey(issuer, resource);
    if (!key) throw new Error('the client holds no DPoP key');
    return key;
  };
  const proof = async (key: StoredDpopKey, accessToken: string) =>
    new SignJWT({
      htm: 'POST',
      htu: resource,
      iat: Math.floor(Date.now() / 1000),
      jti: crypto.randomUUID(),
      ath: createHash('sha256').update(accessToken).digest('base64url'),
    })
      .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: publicJwk(key.private_jwk) })
      .sign(await importJWK(key.private_jwk as JWK, key.alg));

  /** A tools/call sent to one replica, bypassing the balancer, with a fresh proof. */
  const callReplica = async (replica: number, key: StoredDpopKey, accessToken: string, tool: string) => {
    const res = await fetch(`${mcpProxy.targets[replica]}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        authorization: `DPoP ${accessToken}`,
        dpop: await proof(key, accessToken),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } }),
    });
    const text = await res.text();
    const data = text.split('\n').find((line) => line.startsWith('data:'));
    const body = res.ok
      ? (JSON.parse(data ? data.slice(5) : text) as { result?: { structuredContent?: Record<string, unknown> } })
      : undefined;
    return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '', result: body?.result?.structuredContent };
  };

  it('authorization, token and tool call: requests alternate between the instances of each pair', async () => {
    const whoami = await callTool('whoami');
    expect(whoami.structuredContent?.client_id).toBeTypeOf('string');
    expect(asProxy.served.filter((n) => n > 0)).toHaveLength(TOPOLOGY.authServers.length);
    expect(mcpProxy.served.filter((n) => n > 0)).toHaveLength(TOPOLOGY.mcpReplicas.length);
    const tokens = await auth.getTokens(resource);
    const { claims } = inspectAccessToken(tokens!.access_token);
    // RFC 9449 §6.1: DPoP-bound (the PRM and the AS both announce DPoP); the grant is named
    expect((claims.cnf as { jkt?: string } | undefined)?.jkt).toBe((await dpopKey()).jkt);
    expect(claims.grant_id).toBeTypeOf('string');
    console.log(`balancer split: AS ${asProxy.served.join('/')}, MCP ${mcpProxy.served.join('/')}`);
  });

  it('RFC 9449 §11.1: a DPoP proof used at one replica is refused when replayed to the other', async () => {
    const used = mcpProxy.log.findLast((f) => f.method === 'POST' && f.status === 200 && f.headers.dpop !== undefined);
    expect(used).toBeDefined();
    const other = (used!.target + 1) % mcpProxy.targets.length;
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'dpop', 'content-type', 'accept', 'mcp-protocol-version']) {
      const value = used!.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const res = await fetch(`${mcpProxy.targets[other]}${used!.path}`, { method: 'POST', headers, body: used!.body });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');
  });

  it('step-up with one AS killed between the authorization response and the token request: the flow completes on the other', async () => {
    const servedBefore = asProxy.served[1] ?? 0;
    killBeforeTokenRequest = true;
    const added = await callTool('add_note', { text: 'written through the balancer' });
    expect(killed).toBe(true);
    expect(added.isError).not.toBe(true);
    // the token request and everything after it were answered by the survivor alone
    expect(asProxy.served[0]).toBe(servedAtKill);
    expect(asProxy.served[1]).toBeGreaterThan(servedBefore);
    const tokens = await auth.getTokens(resource);
    expect(tokens!.scope?.split(' ')).toEqual(expect.arrayContaining(['notes:read', 'notes:write']));
    // the note is in the shared store: every replica lists it
    const key = await dpopKey();
    for (const replica of TOPOLOGY.mcpReplicas.keys()) {
      const listed = await callReplica(replica, key, tokens!.access_token, 'list_notes');
      expect(listed.status, `replica ${replica}`).toBe(200);
      expect(JSON.stringify(listed.result)).toContain('written through the balancer');
    }
  });

  it('refresh on the surviving AS; the rotated token works on every replica', async () => {
    const stale = (await auth.getTokens(resource))!;
    const refreshed = await auth.refresh(await auth.discover(resource), stale.access_token);
    expect(refreshed?.access_token).toBeTypeOf('string');
    expect(refreshed!.access_token).not.toBe(stale.access_token);
    const key = await dpopKey();
    for (const replica of TOPOLOGY.mcpReplicas.keys()) {
      expect((await callReplica(replica, key, refreshed!.access_token, 'whoami')).status).toBe(200);
    }
  });

  it(`revocation: the revoked grant is refused by every replica within ${DEFAULT_REVOCATION_RESYNC_MS} ms, cached tokens included`, async () => {
    const tokens = (await auth.getTokens(resource))!;
    const key = await dpopKey();
    // both replicas have validated (and cached) the token
    for (const replica of TOPOLOGY.mcpReplicas.keys()) {
      expect((await callReplica(replica, key, tokens.access_token, 'whoami')).status).toBe(200);
    }
    const started = Date.now();
    await auth.logout(resource); // RFC 7009: revokes the refresh token, which ends the grant
    const refusedBy = new Set<number>();
    while (refusedBy.size < TOPOLOGY.mcpReplicas.length && Date.now() - started < DEFAULT_REVOCATION_RESYNC_MS + 1000) {
      for (const replica of TOPOLOGY.mcpReplicas.keys()) {
        const res = await callReplica(replica, key, tokens.access_token, 'whoami');
        if (res.status === 401) {
          expect(res.challenge).toContain('error="invalid_token"');
          refusedBy.add(replica);
        }
      }
    }
    const elapsed = Date.now() - started;
    console.log(`revoked grant refused by ${refusedBy.size} replicas ${elapsed} ms after the revocation request`);
    expect(refusedBy.size).toBe(TOPOLOGY.mcpReplicas.length);
    expect(elapsed).toBeLessThanOrEqual(DEFAULT_REVOCATION_RESYNC_MS);
  });
});

/** The public members of a private JWK (the proof header carries the public key only). */
function publicJwk(jwk: Record<string, unknown>): JWK {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest } = jwk;
  return rest as JWK;
}
