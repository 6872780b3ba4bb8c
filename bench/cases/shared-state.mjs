/**
 * Cases 6 and 7 — scale-out (issue 24).
 * 6: the resource server's shared state: DPoP-bound requests with the replay store in Redis vs in
 *    memory (RFC 9449 §11.1: one `SET NX PXAT` round trip per request), and the validated-token
 *    cache hit with the revocation list on (an in-memory Set lookup) vs off.
 * 7: the authorization server scaled out: code exchanges through a round-robin balancer over two
 *    instances (each its own process) on one PostgreSQL schema vs over one of them.
 */
import { fork } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT } from 'jose';
import pg from 'pg';
import { createClient } from 'redis';
import { createResourceServer, MemoryRevocationList } from '@mcp-auth-kit/resource-server';
import { RedisDpopReplayStore } from '@mcp-auth-kit/resource-server/redis';
import { startRoundRobinProxy } from '../../scripts/round-robin-proxy.mjs';
import { BENCH_CLIENT } from '../lib/as.mjs';
import { exchangeCode, fetchMetadata, obtainCode, pool } from '../lib/oauth.mjs';
import { closeAll, listen } from '../lib/servers.mjs';
import { PG_URL } from './as-throughput.mjs';
import { timeInterleaved } from './validation.mjs';

export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const INSTANCE = fileURLToPath(new URL('../lib/as-instance.mjs', import.meta.url));

/** µs per request of `count` calls of `fn(i)`, `concurrency` in flight. */
async function timed(count, concurrency, fn) {
  const start = performance.now();
  await pool(count, concurrency, fn);
  return ((performance.now() - start) * 1000) / count;
}

export async function runRsSharedState({ rounds, requests, concurrency, sampleMs }) {
  const resource = 'http://127.0.0.1:1/mcp';
  const prefix = `bench-${randomBytes(6).toString('hex')}:`;
  const closers = [];
  try {
    // the AS's part is a signing key and its JWKS: the tokens are made here
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' };
    const jwksServer = await listen();
    jwksServer.setHandler((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
    closers.push(() => jwksServer.close());
    const issuer = jwksServer.origin;
    const proofKey = await generateKeyPair('ES256');
    const proofJwk = await exportJWK(proofKey.publicKey);
    const jkt = await calculateJwkThumbprint(proofJwk);
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ scope: 'notes:read', client_id: 'bench', grant_id: 'bench-grant', cnf: { jkt } })
      .setProtectedHeader({ alg: 'ES256', kid: 'bench', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(resource)
      .setSubject('bench-user')
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .setJti(randomUUID())
      .sign(privateKey);
    const ath = createHash('sha256').update(token).digest('base64url');
    const proof = () =>
      new SignJWT({ htm: 'POST', htu: resource, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ath })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: proofJwk })
        .sign(proofKey.privateKey);

    const redis = createClient({ url: REDIS_URL });
    redis.on('error', () => {});
    await redis.connect();
    closers.push(async () => {
      for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (keys.length) await redis.del(keys);
      redis.destroy();
    });
    const options = { resource, authorizationServers: [issuer], jwks: { uris: { [issuer]: `${issuer}/jwks` } } };
    const memory = createResourceServer({ ...options, dpop: true });
    const shared = createResourceServer({ ...options, dpop: { replay: new RedisDpopReplayStore({ client: redis, prefix }) } });
    const revocation = new MemoryRevocationList();
    for (let i = 0; i < 1000; i++) revocation.revoke(`revoked-${i}`, Date.now() + 3_600_000);
    const plain = createResourceServer(options);
    const listed = createResourceServer({ ...options, revocation });
    closers.push(...[memory, shared, plain, listed].map((rs) => () => rs.close()));

    const variants = [
      ['DPoP request, replay store in memory', memory],
      ['DPoP request, replay store in Redis', shared],
    ];
    const dpopRows = variants.map(([label]) => ({ label, unit: 'µs/req', values: [] }));
    // warm-up: keys fetched, token cached, Redis connection busy once
    for (const [, rs] of variants) {
      for (let i = 0; i < 20; i++) await rs.core.authenticate({ authorization: `DPoP ${token}`, dpop: await proof(), method: 'POST' });
    }
    const bearer = { plain: () => plain.verifyAccessToken(token), listed: () => listed.verifyAccessToken(token) };
    await bearer.plain();
    await bearer.listed();
    const key = await importJWK(jwk, 'ES256');
    const jose = () => jwtVerify(token, key, { issuer, audience: resource, typ: 'at+jwt', algorithms: ['ES256'] });
    const hitRows = [
      { label: 'cache hit, no revocation list', unit: 'µs/call', values: [] },
      { label: 'cache hit, revocation list (1000 grants)', unit: 'µs/call', values: [] },
      { label: 'jose jwtVerify (imported key)', unit: 'µs/call', values: [] },
    ];

    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < variants.length; k++) {
        const i = (k + round) % variants.length;
        const rs = variants[i][1];
        const proofs = await Promise.all(Array.from({ length: requests }, () => proof()));
        dpopRows[i].values[round] = await timed(requests, concurrency, (n) =>
          rs.core.authenticate({ authorization: `DPoP ${token}`, dpop: proofs[n], method: 'POST' }),
        );
      }
      const perCall = await timeInterleaved([bearer.plain, bearer.listed, jose], sampleMs);
      for (const [i, us] of perCall.entries()) hitRows[i].values[round] = us;
    }
    return {
      title: `6. resource-server shared state — ${requests} DPoP-bound requests per variant and round (${concurrency} in flight, fresh proof each), ${rounds} rounds; cache hits alternating in 5 ms slices`,
      notes: ['Redis at BENCH_REDIS_URL (default redis://127.0.0.1:6379) on this machine: one SET NX PXAT round trip per DPoP request.'],
      rows: [...dpopRows, ...hitRows],
      ratios: [
        { label: 'DPoP request: Redis replay store / memory (time)', of: [dpopRows[1].label, dpopRows[0].label] },
        { label: 'cache hit: with revocation list / without (time)', of: [hitRows[1].label, hitRows[0].label] },
        {
          label: 'jose / cache hit with revocation list (speed-up)',
          of: [hitRows[2].label, hitRows[1].label],
          target: { op: '>=', value: 10 },
        },
      ],
    };
  } finally {
    await closeAll(closers);
  }
}

/** One AS instance in a child process; resolves with its base URL and a stop function. */
function startInstance(input) {
  return new Promise((resolve, reject) => {
    const child = fork(INSTANCE, [JSON.stringify(input)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.once('message', ({ port }) =>
      resolve({
        url: `http://127.0.0.1:${port}`,
        stop: () =>
          new Promise((done) => {
            child.once('exit', done);
            child.kill('SIGTERM');
          }),
      }),
    );
    child.once('exit', (code) =>
      reject(new Error(`AS instance exited (${code}): ${stderr.split('\n').find((l) => /Error/.test(l)) ?? ''}`)),
    );
  });
}

export async function runAsScaleOut({ rounds, codes, concurrency }) {
  const resource = 'http://127.0.0.1:1/mcp';
  const schema = `bench_scale_${randomBytes(4).toString('hex')}`;
  const closers = [];
  try {
    const proxy = await startRoundRobinProxy();
    closers.push(() => proxy.close());
    closers.push(async () => {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    const instances = [];
    // one after the other: the first one migrates the fresh schema
    for (let i = 0; i < 2; i++) {
      const instance = await startInstance({ issuer: proxy.url, resource, url: PG_URL, schema });
      instances.push(instance);
      closers.push(() => instance.stop());
    }
    const variants = [
      ['1 instance', [instances[0].url]],
      ['2 instances', instances.map((i) => i.url)],
    ];
    proxy.targets.push(...variants[1][1]);
    const metadata = await fetchMetadata(proxy.url);
    const client = { ...BENCH_CLIENT, resource };
    // a fresh user agent per flow (obtainCode's default): concurrent flows never share a session.
    // Codes live 60 s (oidc-provider's default): a batch that took longer could not be timed.
    const batch = async () => {
      const started = performance.now();
      const issued = await pool(codes, 8, () => obtainCode({ metadata, ...client, scope: 'notes:read' }));
      if (performance.now() - started > 45_000)
        throw new Error(`obtaining ${codes} codes took over 45 s: too loaded to time their exchange before they expire`);
      return issued;
    };
    // warm-up on both instances
    await pool(20, 8, async () => exchangeCode(metadata, client, await obtainCode({ metadata, ...client, scope: 'notes:read' })));

    const rows = variants.map(([label]) => ({ label: `code exchanges, ${label}, ${concurrency} concurrent`, unit: 'ops/s', values: [] }));
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < variants.length; k++) {
        const i = (k + round) % variants.length;
        proxy.targets.splice(0, proxy.targets.length, ...variants[1][1]);
        const issued = await batch(); // untimed, on both instances
        proxy.targets.splice(0, proxy.targets.length, ...variants[i][1]);
        const start = performance.now();
        await pool(codes, concurrency, (n) => exchangeCode(metadata, client, issued[n]));
        rows[i].values[round] = codes / ((performance.now() - start) / 1000);
      }
    }
    return {
      title: `7. AS scaled out — ${codes} code exchanges per variant and round through a round-robin balancer, PostgreSQL (one schema), each instance its own process, ${rounds} rounds`,
      notes: [
        'Both variants go through the same balancer (scripts/round-robin-proxy.mjs); only its backends change. On a machine with few cores the instances, the balancer, the driver and PostgreSQL share them: the ratio says how much a second instance adds here, not on separate hosts.',
      ],
      rows,
      ratios: [{ label: 'code exchanges: 2 instances / 1 instance', of: [rows[1].label, rows[0].label] }],
    };
  } finally {
    await closeAll(closers);
  }
}
