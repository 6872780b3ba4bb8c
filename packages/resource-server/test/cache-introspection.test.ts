import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import type { VerifiedAccessToken } from '../src/index.js';
import { TokenCache, tokenHash } from '../src/token-cache.js';
import { ConnectionTokenHashes } from '../src/token-cache.js';
import { ConnectionCredentials, extractCredentials } from '../src/credentials.js';
import { ResourceServerError } from '../src/errors.js';
import { makeApp, startIssuerWithKey, RESOURCE, rpc, signToken, withApp, type StubIssuer, type SigningKey } from './helpers/harness.js';
import { verifierOf } from './helpers/internals.js';

let as: StubIssuer;
let key: SigningKey;
beforeAll(async () => {
  ({ as, key } = await startIssuerWithKey());
});
afterAll(() => as.stop());

function entry(token: string, expiresAt: number): VerifiedAccessToken {
  return {
    token,
    source: 'jwt',
    issuer: 'i',
    subject: 's',
    clientId: 'c',
    jti: 'j',
    scopes: [],
    expiresAt,
    resource: RESOURCE,
    claims: {},
  };
}

describe('TokenCache', () => {
  it('is keyed by SHA-256 of the token, never the token itself', () => {
    expect(tokenHash('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  });

  it('never returns an entry at or past its exp', () => {
    let clock = 1_000_000;
    const cache = new TokenCache(10, () => clock);
    cache.set(entry('t', 1_000 + 60));
    clock = 1_059_999;
    expect(cache.get('t')?.token).toBe('t');
    clock = 1_060_000;
    expect(cache.get('t')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('a ttl bound shortens the life of an entry (introspection)', () => {
    let clock = 0;
    const cache = new TokenCache(10, () => clock);
    cache.set(entry('t', 3600), 1000);
    clock = 999;
    expect(cache.get('t')).toBeDefined();
    clock = 1000;
    expect(cache.get('t')).toBeUndefined();
  });

  it('does not store already-expired entries and evicts the least recently used', () => {
    const cache = new TokenCache(2, () => 10_000);
    cache.set(entry('old', 5));
    expect(cache.size).toBe(0);
    cache.set(entry('a', 100));
    cache.set(entry('b', 100));
    cache.get('a');
    cache.set(entry('c', 100));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
  });

  it('recency is tracked from half full on: an entry used then is not the one evicted', () => {
    const cache = new TokenCache(4, () => 10_000);
    cache.set(entry('a', 100));
    cache.set(entry('b', 100));
    cache.get('a'); // half full: a becomes the most recent
    cache.set(entry('c', 100));
    cache.set(entry('d', 100));
    cache.set(entry('e', 100)); // full: the least recent (b) goes
    expect(cache.get('b')).toBeUndefined();
    for (const t of ['a', 'c', 'd', 'e']) expect(cache.get(t), t).toBeDefined();
  });

  it('maxEntries 0 disables it', () => {
    const cache = new TokenCache(0, () => 0);
    cache.set(entry('a', 100));
    expect(cache.size).toBe(0);
  });
});

describe('ConnectionTokenHashes (a keep-alive connection hashes its token once)', () => {
  it('gives the token hash whatever the connection saw before; no connection: hashed each time', () => {
    const hashes = new ConnectionTokenHashes();
    const a = {};
    const b = {};
    for (const [token, connection] of [
      ['t1', a],
      ['t1', a],
      ['t2', a],
      ['t1', a],
      ['t2', b],
      ['t1', b],
      ['t1', undefined],
    ] as const) {
      expect(hashes.keyFor(token, connection)).toBe(tokenHash(token));
    }
  });
});

describe('ConnectionCredentials (a keep-alive connection parses its Authorization header once)', () => {
  /** The outcome of one extraction: the credentials, or the refusal's reason. */
  function outcome(run: () => unknown): unknown {
    try {
      return run();
    } catch (err) {
      return err instanceof ResourceServerError ? err.reason : err;
    }
  }

  it.each([false, true])('gives what extractCredentials gives, request by request (DPoP accepted: %s)', (acceptDpop) => {
    const memo = new ConnectionCredentials(acceptDpop);
    const a = {};
    const b = {};
    for (const [authorization, url, connection] of [
      ['Bearer t1', '/mcp', a],
      ['Bearer t1', '/mcp', a],
      // RFC 6750 §2.3 / MCP: the query is checked on every request, the header remembered or not
      ['Bearer t1', '/mcp?access_token=t1', a],
      ['Bearer t1', '/mcp?x=1', a],
      ['DPoP t1', '/mcp', a],
      ['Bearer a,b', '/mcp', a],
      ['Bearer t1', '/mcp', a],
      [undefined, '/mcp', a],
      ['Bearer t2', '/mcp', b],
      ['Bearer t1', '/mcp', undefined],
    ] as const) {
      const sources = { authorization, url };
      expect(outcome(() => memo.extract(sources, connection))).toEqual(outcome(() => extractCredentials(sources, acceptDpop)));
    }
  });

  it('a body token is refused on a remembered header too (RFC 6750 §2.2), and the remembered result cannot be changed', () => {
    const memo = new ConnectionCredentials(false);
    const connection = {};
    const first = memo.extract({ authorization: 'Bearer t1' }, connection);
    expect(() => memo.extract({ authorization: 'Bearer t1', tokenInBody: true }, connection)).toThrow(
      expect.objectContaining({ reason: 'token_in_body' }),
    );
    expect(Object.isFrozen(first)).toBe(true);
    expect(memo.extract({ authorization: 'Bearer t1' }, connection)).toEqual({ scheme: 'bearer', token: 't1' });
  });
});

/** GETs of /mcp with each token in turn, all on one keep-alive connection: status and subject. */
async function onOneConnection(app: http.RequestListener, tokens: (string | { token: string; path: string })[]) {
  const server = http.createServer(app);
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const results: { status: number; sub: unknown }[] = [];
    for (const entry of tokens) {
      const { token, path } = typeof entry === 'string' ? { token: entry, path: '/mcp' } : entry;
      results.push(
        await new Promise((resolve, reject) => {
          const req = http.get(
            {
              host: '127.0.0.1',
              port: (server.address() as AddressInfo).port,
              path,
              agent,
              headers: { authorization: `Bearer ${token}` },
            },
            (res) => {
              let text = '';
              res.on('data', (chunk) => (text += chunk));
              res.on('end', () =>
                resolve({
                  status: res.statusCode ?? 0,
                  sub: (JSON.parse(text) as { auth?: { extra?: { sub?: unknown } } }).auth?.extra?.sub,
                  ...(res.statusCode === 200 ? {} : { error: (JSON.parse(text) as { error?: unknown }).error }),
                }),
              );
            },
          );
          req.on('error', reject);
        }),
      );
    }
    return { results, connections };
  } finally {
    agent.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('validated-token cache through rs.protect', () => {
  it("two users' tokens alternating on one keep-alive connection (a proxy multiplexing users): each request is its own token's subject; a forged one is refused", async () => {
    await withApp({ authorizationServers: [as.issuer] }, async (t) => {
      const alice = await signToken({ key, issuer: as.issuer, claims: { sub: 'alice' } });
      const bob = await signToken({ key, issuer: as.issuer, claims: { sub: 'bob' } });
      // alice's token with bob's payload: the signature no longer matches
      const [h, , sig] = alice.split('.');
      const forged = [h, bob.split('.')[1], sig].join('.');
      const { results, connections } = await onOneConnection(t.app, [alice, bob, alice, alice, forged, bob, alice]);
      expect(connections).toBe(1);
      expect(results).toEqual([
        { status: 200, sub: 'alice' },
        { status: 200, sub: 'bob' },
        { status: 200, sub: 'alice' },
        { status: 200, sub: 'alice' },
        { status: 401, sub: undefined, error: 'invalid_token' },
        { status: 200, sub: 'bob' },
        { status: 200, sub: 'alice' },
      ]);
    });
  });

  it('MCP §Token Requirements: the same header again on one connection, now with the token in the query → 400, then served again', async () => {
    await withApp({ authorizationServers: [as.issuer] }, async (t) => {
      const alice = await signToken({ key, issuer: as.issuer, claims: { sub: 'alice' } });
      const { results, connections } = await onOneConnection(t.app, [alice, { token: alice, path: `/mcp?access_token=${alice}` }, alice]);
      expect(connections).toBe(1);
      expect(results).toEqual([
        { status: 200, sub: 'alice' },
        { status: 400, sub: undefined, error: 'invalid_request' },
        { status: 200, sub: 'alice' },
      ]);
    });
  });

  it('caches by default, and a cached token is refused once the clock reaches exp', async () => {
    let clock = Date.now();
    await withApp({ authorizationServers: [as.issuer], clockTolerance: 0, now: () => clock }, async (t) => {
      const iat = Math.floor(clock / 1000);
      const token = await signToken({ key, issuer: as.issuer, now: iat, claims: { exp: iat + 60 } });
      await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping')).expect(200);
      expect(verifierOf(t.rs).cacheSize).toBe(1);
      clock += 59_000;
      await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping')).expect(200);
      clock = (iat + 60) * 1000;
      const res = await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping')).expect(401);
      expect(res.body.error).toBe('invalid_token');
      expect(t.logs.at(-1)?.details?.reason).toBe('expired');
    });
  });

  it('cache: false turns it off (for benchmarks)', async () => {
    await withApp({ authorizationServers: [as.issuer], cache: false }, async (t) => {
      const token = await signToken({ key, issuer: as.issuer });
      await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping')).expect(200);
      expect(verifierOf(t.rs).cacheSize).toBe(0);
    });
  });

  it('a cached token still goes through the scope policy on every request', async () => {
    await withApp({ authorizationServers: [as.issuer] }, async (t) => {
      const token = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read' } });
      await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('tools/list')).expect(200);
      await request(t.app)
        .post('/mcp')
        .set('Authorization', `Bearer ${token}`)
        .send(rpc('tools/call', { name: 'add_note' }))
        .expect(403);
    });
  });
});

describe('opaque tokens via RFC 7662 introspection', () => {
  const introspection = () => ({ endpoint: `${as.origin}/introspect`, clientId: 'rs client', clientSecret: 's3cr:t' });

  function active(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      active: true,
      client_id: 'client-9',
      scope: 'notes:read notes:write',
      sub: 'user-9',
      iss: as.issuer,
      aud: RESOURCE,
      exp: Math.floor(Date.now() / 1000) + 300,
      token_type: 'Bearer',
      ...extra,
    };
  }

  it('RFC 7662 §2: an active token for this resource is accepted; the RS authenticates with client_secret_basic', async () => {
    as.introspectionResponses.set('opaque-ok', active({ jti: 'op-1' }));
    await withApp({ authorizationServers: [as.issuer], introspection: introspection() }, async (t) => {
      const res = await request(t.app)
        .post('/mcp')
        .set('Authorization', 'Bearer opaque-ok')
        .send(rpc('tools/call', { name: 'add_note' }))
        .expect(200);
      expect(res.body.auth).toMatchObject({
        token: 'opaque-ok',
        clientId: 'client-9',
        scopes: ['notes:read', 'notes:write'],
        resource: RESOURCE,
        extra: { sub: 'user-9', iss: as.issuer, jti: 'op-1', tokenType: 'introspection' },
      });
      expect(as.lastIntrospectionAuth).toBe(`Basic ${Buffer.from('rs%20client:s3cr%3At').toString('base64')}`);
      expect(new URLSearchParams(as.lastIntrospectionBody).get('token_type_hint')).toBe('access_token');
    });
  });

  it.each([
    ['inactive', { active: false }, 'introspection_inactive'],
    ['other audience', { aud: 'http://localhost:3000/other' }, 'aud_mismatch'],
    ['no audience', { aud: undefined }, 'aud_mismatch'],
    ['foreign issuer', { iss: 'https://evil.example' }, 'iss_untrusted'],
    ['expired', { exp: Math.floor(Date.now() / 1000) - 60 }, 'expired'],
    ['no client_id', { client_id: undefined }, 'missing_claim'],
    ['refresh token', { token_type: 'refresh_token' }, 'claim_invalid'],
  ])('%s → 401 invalid_token', async (_name, patch, reason) => {
    const response = active(patch);
    for (const [k, v] of Object.entries(patch)) if (v === undefined) delete response[k];
    as.introspectionResponses.set(`opaque-${reason}`, response);
    await withApp({ authorizationServers: [as.issuer], introspection: introspection() }, async (t) => {
      const res = await request(t.app).post('/mcp').set('Authorization', `Bearer opaque-${reason}`).send(rpc('ping')).expect(401);
      expect(res.body.error).toBe('invalid_token');
      expect(t.logs.at(-1)?.details?.reason).toBe(reason);
    });
  });

  it('fail closed, and an outage is not an invalid token: introspection endpoint error → 503 + Retry-After, no invalid_token challenge; the token works once it answers', async () => {
    as.introspectionResponses.set('opaque-down', active());
    as.introspectionStatus = 503;
    const t = makeApp({ authorizationServers: [as.issuer], introspection: introspection() });
    try {
      const res = await request(t.app).post('/mcp').set('Authorization', 'Bearer opaque-down').send(rpc('ping')).expect(503);
      expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(res.body.error).toBe('temporarily_unavailable');
      expect(t.logs.at(-1)?.details?.reason).toBe('introspection_failed');
      as.introspectionStatus = 200;
      await request(t.app).post('/mcp').set('Authorization', 'Bearer opaque-down').send(rpc('ping')).expect(200);
    } finally {
      as.introspectionStatus = 200;
      await t.rs.close();
    }
  });

  it('concurrent requests with the same token share one introspection call', async () => {
    as.introspectionResponses.set('opaque-burst', active());
    const t = makeApp({ authorizationServers: [as.issuer], introspection: introspection(), cache: false });
    try {
      const before = as.hits.introspection;
      const results = await Promise.all(Array.from({ length: 5 }, () => t.rs.verifyAccessToken('opaque-burst')));
      expect(results.map((r) => r.clientId)).toEqual(Array(5).fill('client-9'));
      expect(as.hits.introspection - before).toBe(1);
      await t.rs.verifyAccessToken('opaque-burst'); // cache off: a later call asks again
      expect(as.hits.introspection - before).toBe(2);
    } finally {
      await t.rs.close();
    }
  });

  it('active results are cached no longer than exp and cacheTtlSeconds', async () => {
    let clock = Date.now();
    const exp = Math.floor(clock / 1000) + 30;
    as.introspectionResponses.set('opaque-cached', active({ exp }));
    await withApp(
      {
        authorizationServers: [as.issuer],
        introspection: { ...introspection(), cacheTtlSeconds: 10 },
        now: () => clock,
        clockTolerance: 0,
      },
      async (t) => {
        const hit = () => request(t.app).post('/mcp').set('Authorization', 'Bearer opaque-cached').send(rpc('ping'));
        const before = as.hits.introspection;
        await hit().expect(200);
        await hit().expect(200);
        expect(as.hits.introspection - before).toBe(1);
        clock += 10_000; // ttl bound reached: asks again
        await hit().expect(200);
        expect(as.hits.introspection - before).toBe(2);
        clock = exp * 1000; // exp reached: the AS still says active, but the token is expired
        await hit().expect(401);
        expect(t.logs.at(-1)?.details?.reason).toBe('expired');
      },
    );
  });
});

describe('JWT access tokens also introspected (introspection.introspectJwt)', () => {
  const options = () => ({
    authorizationServers: [as.issuer],
    introspection: { endpoint: `${as.origin}/introspect`, clientId: 'rs', clientSecret: 'rs-secret', introspectJwt: true },
    cache: false as const,
  });
  const activeFor = (token: string) => {
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    return { ...claims, active: true, token_type: 'Bearer' };
  };
  /** {@link withApp}, then the AS forgets what it was told to answer for `token`. */
  const withTokenApp = (token: string, opts: Parameters<typeof withApp>[0], test: Parameters<typeof withApp>[1]) =>
    withApp(opts, test).finally(() => as.introspectionResponses.delete(token));

  it('RFC 7662 §2.2: a valid JWT the AS reports active is accepted; once the AS says inactive (grant revoked) the same JWT is refused', async () => {
    const token = await signToken({ key, issuer: as.issuer });
    as.introspectionResponses.set(token, activeFor(token));
    await withTokenApp(token, options(), async (t) => {
      const res = await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping')).expect(200);
      expect(res.body.auth.extra.tokenType).toBe('introspection');
      as.introspectionResponses.set(token, { active: false });
      await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping')).expect(401);
      expect(t.logs.at(-1)?.details?.reason).toBe('introspection_inactive');
    });
  });

  it('a JWT that fails local verification is refused without asking the AS', async () => {
    const token = await signToken({ key, issuer: as.issuer, claims: { aud: 'http://localhost:3000/other' } });
    as.introspectionResponses.set(token, activeFor(token));
    await withTokenApp(token, options(), async (t) => {
      const before = as.hits.introspection;
      await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping')).expect(401);
      expect(t.logs.at(-1)?.details?.reason).toBe('aud_mismatch');
      expect(as.hits.introspection).toBe(before);
    });
  });

  it('an answer about another token (other jti or client_id) is refused: 401 invalid_token (introspection_mismatch)', async () => {
    const token = await signToken({ key, issuer: as.issuer });
    await withTokenApp(token, options(), async (t) => {
      for (const patch of [{ jti: 'someone-else' }, { client_id: 'other-client' }]) {
        as.introspectionResponses.set(token, { ...activeFor(token), ...patch });
        await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping')).expect(401);
        expect(t.logs.at(-1)?.details?.reason).toBe('introspection_mismatch');
      }
    });
  });

  it('without introspectJwt a JWT is verified locally only (no introspection call)', async () => {
    const token = await signToken({ key, issuer: as.issuer });
    as.introspectionResponses.set(token, { active: false });
    await withTokenApp(token, { ...options(), introspection: { ...options().introspection, introspectJwt: false } }, async (t) => {
      const before = as.hits.introspection;
      await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping')).expect(200);
      expect(as.hits.introspection).toBe(before);
    });
  });
});

describe('introspection.timeoutMs (its own bound, not jwks.timeoutMs)', () => {
  it('an introspection endpoint that never answers is given up after introspection.timeoutMs → 503, not after the JWKS timeout', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => {
      // never answers: only the client's timeout ends the request
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as import('node:net').AddressInfo;
    const t = makeApp({
      authorizationServers: [as.issuer],
      jwks: { timeoutMs: 60_000 },
      introspection: { endpoint: `http://127.0.0.1:${port}/introspect`, clientId: 'rs', clientSecret: 'rs-secret', timeoutMs: 200 },
      cache: false,
    });
    try {
      // with the old shared bound (60 s here) this request would outlive the test's own timeout
      const res = await request(t.app).post('/mcp').set('Authorization', 'Bearer opaque-token').send(rpc('ping'));
      expect(res.status).toBe(503);
      expect(t.logs.some((l) => JSON.stringify(l).includes('introspection_failed'))).toBe(true);
    } finally {
      await t.rs.close();
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 10_000);

  it('is validated with the other options', async () => {
    const { createResourceServer, ConfigError } = await import('../src/index.js');
    expect(() =>
      createResourceServer({
        resource: RESOURCE,
        authorizationServers: [as.issuer],
        introspection: { endpoint: `${as.origin}/introspect`, clientId: 'rs', clientSecret: 's', timeoutMs: 0 },
      }),
    ).toThrowError(ConfigError);
  });
});
