import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import express from 'express';
import {
  makeApp,
  parseChallenge,
  postMcp,
  rpc,
  signToken,
  stopServers,
  startIssuerWithKey,
  type StubIssuer,
  type SigningKey,
  type TestApp,
} from './helpers/harness.js';
import { MemoryRevocationList } from '../src/index.js';
import { verifierOf } from './helpers/internals.js';

let as: StubIssuer;
let key: SigningKey;
let t: TestApp;
let readToken: string;
let writeToken: string;

const PRM = 'http://localhost:3000/.well-known/oauth-protected-resource/mcp';

beforeAll(async () => {
  ({ as, key } = await startIssuerWithKey());
  t = makeApp({ authorizationServers: [as.issuer], allowedHosts: ['localhost:3000', '127.0.0.1'] });
  readToken = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read' } });
  writeToken = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read notes:write' } });
});
afterAll(() => stopServers(t.rs, as));

const post = (body: unknown, token?: string) => postMcp(t.app, body, { host: 'localhost:3000', token });

describe('rs.protect: challenges (RFC 6750 §3, RFC 9728 §5.1, MCP §Error Handling)', () => {
  it('RFC 6750 §3.1 / RFC 9728 §5.1: no credentials → 401 with resource_metadata and scope, and no error', async () => {
    const res = await post(rpc('initialize')).expect(401);
    const header = res.headers['www-authenticate'] as string;
    expect(header).not.toContain('error');
    expect(parseChallenge(header)).toEqual({
      scheme: 'Bearer',
      params: { scope: 'notes:read', resource_metadata: PRM },
    });
    expect(res.body).toEqual({ error_description: 'This resource requires a bearer access token' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('the MCP handler never runs for a refused request', async () => {
    const res = await post(rpc('tools/list')).expect(401);
    expect(res.body.auth).toBeUndefined();
  });

  it.each([['Bearer'], ['Bearer  a b'], ['Basic dXNlcjpwYXNz'], ['Bearer a,b'], ['Token abc']])(
    'RFC 6750 §3.1: malformed Authorization %j → 400 invalid_request',
    async (header) => {
      const res = await postMcp(t.app, rpc('ping'), { host: 'localhost:3000', authorization: header }).expect(400);
      const challenge = parseChallenge(res.headers['www-authenticate'] as string);
      expect(challenge.params.error).toBe('invalid_request');
      expect(challenge.params.resource_metadata).toBe(PRM);
      expect(res.body.error).toBe('invalid_request');
    },
  );

  it('MCP §Token Requirements: a token in the query string is refused (400 invalid_request), even if valid', async () => {
    const res = await request(t.app).post(`/mcp?access_token=${readToken}`).set('Host', 'localhost:3000').send(rpc('ping')).expect(400);
    expect(res.body.error).toBe('invalid_request');
    expect(JSON.stringify(t.logs.at(-1))).not.toContain(readToken);
    await request(t.app)
      .get(`/mcp?access_token=${readToken}`)
      .set('Host', 'localhost:3000')
      .set('Authorization', `Bearer ${readToken}`)
      .expect(400);
  });

  it('RFC 6750 §2.2: a token in a form body is refused (400 invalid_request)', async () => {
    const res = await request(t.app)
      .post('/mcp')
      .set('Host', 'localhost:3000')
      .type('form')
      .send({ access_token: readToken, method: 'ping' })
      .expect(400);
    expect(res.body.error).toBe('invalid_request');
    expect(t.logs.at(-1)?.details?.reason).toBe('token_in_body');
  });

  it('a form body without a token is not mistaken for one', async () => {
    const res = await request(t.app)
      .post('/mcp')
      .set('Host', 'localhost:3000')
      .set('Authorization', `Bearer ${readToken}`)
      .type('form')
      .send({ a: '1' })
      .expect(200);
    expect(res.body.body).toEqual({ a: '1' });
  });

  it('Streamable HTTP §Security: a bad Origin → 403 before any token work (DNS rebinding)', async () => {
    const res = await postMcp(t.app, rpc('ping'), { host: 'localhost:3000', origin: 'http://evil.example', token: readToken }).expect(403);
    expect(res.body).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden: Origin not allowed' } });
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it.each(['null', 'http://localhost:3001', 'https://localhost:3000', 'not a url'])('Origin %j → 403', async (origin) => {
    await request(t.app).post('/mcp').set('Host', 'localhost:3000').set('Origin', origin).send(rpc('ping')).expect(403);
  });

  it('an allowed Origin (any case, default port) and a missing Origin pass', async () => {
    await postMcp(t.app, rpc('ping'), { host: 'localhost:3000', origin: 'HTTP://LOCALHOST:3000', token: readToken }).expect(200);
    await post(rpc('ping'), readToken).expect(200);
  });

  it('Host allowlist (DNS rebinding without Origin): unknown Host → 403', async () => {
    await postMcp(t.app, rpc('ping'), { host: 'attacker.example:3000', token: readToken }).expect(403);
    expect(t.logs.at(-1)?.details?.reason).toBe('host_forbidden');
    await request(t.app).post('/mcp').set('Host', '127.0.0.1:80').set('Authorization', `Bearer ${readToken}`).send(rpc('ping')).expect(200);
  });

  it('MCP transports §Security (DNS rebinding), no allowedHosts: a loopback resource accepts only loopback Host names', async () => {
    const local = makeApp({ authorizationServers: [as.issuer] });
    try {
      // A rebinding page's GET carries no Origin: only the Host shows the attacker's name.
      for (const host of ['attacker.example:3000', 'localhost.attacker.example', '127.0.0.1.nip.io:3000', '']) {
        await request(local.app).get('/mcp').set('Host', host).set('Authorization', `Bearer ${readToken}`).expect(403);
        expect(local.logs.at(-1)?.details?.reason).toBe('host_forbidden');
      }
      for (const host of ['localhost:3000', 'LOCALHOST:3000', '127.0.0.1:49152', '[::1]:3000', 'app.localhost:3000']) {
        await request(local.app).post('/mcp').set('Host', host).set('Authorization', `Bearer ${readToken}`).send(rpc('ping')).expect(200);
      }
    } finally {
      await local.rs.close();
    }
  });

  it('no allowedHosts and a public resource: no Host check (a proxy may rewrite Host); the Origin check still applies', async () => {
    const remote = makeApp({ authorizationServers: [as.issuer], resource: 'https://mcp.example.com/mcp', allowedOrigins: undefined });
    try {
      await postMcp(remote.app, rpc('ping'), { host: 'internal-upstream:8080', token: readToken }).expect(401);
      expect(remote.logs.at(-1)?.details?.reason).not.toBe('host_forbidden');
      await postMcp(remote.app, rpc('ping'), { host: 'internal-upstream:8080', origin: 'http://evil.example' }).expect(403);
    } finally {
      await remote.rs.close();
    }
  });
});

describe('rs.protect: MCP scope policy (MCP §Scope Challenge Handling)', () => {
  it('a read token may list tools', async () => {
    await post(rpc('tools/list'), readToken).expect(200);
  });

  it('per-tool policy: add_note without notes:write → 403 insufficient_scope listing every needed scope', async () => {
    const res = await post(rpc('tools/call', { name: 'add_note', arguments: { text: 'x' } }), readToken).expect(403);
    const challenge = parseChallenge(res.headers['www-authenticate'] as string);
    expect(challenge.params).toEqual({
      error: 'insufficient_scope',
      error_description: 'The access token lacks the scope this request needs',
      scope: 'notes:read notes:write',
      resource_metadata: PRM,
    });
    expect(res.body).toEqual({
      error: 'insufficient_scope',
      error_description: 'The access token lacks the scope this request needs',
      scope: 'notes:read notes:write',
    });
  });

  it('the same call with notes:write passes, and the handler gets the parsed body', async () => {
    const body = rpc('tools/call', { name: 'add_note', arguments: { text: 'x' } });
    const res = await post(body, writeToken).expect(200);
    expect(res.body.body).toEqual(body);
  });

  it('JSON-RPC batch: the union of needs decides (one write call in the batch → 403)', async () => {
    const batch = [rpc('tools/list', {}, 1), rpc('tools/call', { name: 'add_note' }, 2)];
    const res = await post(batch, readToken).expect(403);
    expect(parseChallenge(res.headers['www-authenticate'] as string).params.scope).toBe('notes:read notes:write');
    const ok = await post(batch, writeToken).expect(200);
    expect(ok.body.body).toEqual(batch);
    await post([rpc('tools/list', {}, 1), rpc('ping', {}, 2)], readToken).expect(200);
  });

  it('default scope is needed for every request (a token without notes:read → 403)', async () => {
    const none = await signToken({ key, issuer: as.issuer, claims: { scope: 'other' } });
    const res = await post(rpc('ping'), none).expect(403);
    expect(parseChallenge(res.headers['www-authenticate'] as string).params.scope).toBe('notes:read');
    const noScope = await signToken({ key, issuer: as.issuer, claims: { scope: undefined } });
    await post(rpc('ping'), noScope).expect(403);
  });

  it('GET (SSE stream) and DELETE need the default scope only', async () => {
    await request(t.app).get('/mcp').set('Host', 'localhost:3000').set('Authorization', `Bearer ${readToken}`).expect(200);
    await request(t.app).delete('/mcp').set('Host', 'localhost:3000').set('Authorization', `Bearer ${readToken}`).expect(200);
  });

  it('per-method policy and scope hierarchy', async () => {
    const h = makeApp({
      authorizationServers: [as.issuer],
      scopePolicy: { default: ['notes:read'], methods: { 'resources/subscribe': ['notes:watch'] }, tools: { add_note: ['notes:write'] } },
      scopeHierarchy: { 'notes:write': ['notes:read', 'notes:watch'] },
    });
    try {
      const writer = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:write' } });
      await postMcp(h.app, rpc('resources/subscribe', { uri: 'x' }), { token: writer }).expect(200);
      const res = await postMcp(h.app, rpc('resources/subscribe', { uri: 'x' }), { token: readToken }).expect(403);
      expect(parseChallenge(res.headers['www-authenticate'] as string).params.scope).toBe('notes:read notes:watch');
    } finally {
      await h.rs.close();
    }
  });

  it("challengeScopes 'required-and-granted' repeats known granted scopes", async () => {
    const g = makeApp({
      authorizationServers: [as.issuer],
      challengeScopes: 'required-and-granted',
      scopesSupported: ['notes:read', 'notes:write', 'notes:share'],
      scopePolicy: { default: [], tools: { add_note: ['notes:write'] } },
    });
    try {
      const tok = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:share offline_access openid' } });
      const res = await postMcp(g.app, rpc('tools/call', { name: 'add_note' }), { token: tok }).expect(403);
      expect(parseChallenge(res.headers['www-authenticate'] as string).params.scope).toBe('notes:write notes:share');
    } finally {
      await g.rs.close();
    }
  });
});

describe('rs.protect: body handling', () => {
  it('works behind express.json() (pre-parsed body is used as is)', async () => {
    const pre = makeApp({ authorizationServers: [as.issuer] }, true);
    try {
      const body = rpc('tools/call', { name: 'add_note' });
      await request(pre.app).post('/mcp').set('Authorization', `Bearer ${readToken}`).send(body).expect(403);
      const res = await request(pre.app).post('/mcp').set('Authorization', `Bearer ${writeToken}`).send(body).expect(200);
      expect(res.body.body).toEqual(body);
    } finally {
      await pre.rs.close();
    }
  });

  it('invalid JSON from an authenticated client → 400 JSON-RPC parse error (not 500)', async () => {
    const res = await request(t.app)
      .post('/mcp')
      .set('Host', 'localhost:3000')
      .set('Authorization', `Bearer ${writeToken}`)
      .set('Content-Type', 'application/json')
      .send('{"jsonrpc":')
      .expect(400);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: invalid JSON' } });
  });

  it('the body of an unauthenticated request is not read (401 first)', async () => {
    await request(t.app).post('/mcp').set('Host', 'localhost:3000').set('Content-Type', 'application/json').send('{"jsonrpc":').expect(401);
  });

  it('a body larger than maxBodyBytes → 413', async () => {
    const small = makeApp({ authorizationServers: [as.issuer], maxBodyBytes: 100 });
    try {
      await postMcp(small.app, rpc('tools/call', { name: 'x', arguments: { text: 'y'.repeat(200) } }), { token: writeToken }).expect(413);
    } finally {
      await small.rs.close();
    }
  });

  it('Streamable HTTP Mcp-Method/Mcp-Name headers cannot downgrade the policy: the body decides', async () => {
    await post(rpc('tools/call', { name: 'add_note' }), readToken)
      .set('Mcp-Method', 'tools/list')
      .set('Mcp-Name', 'list_notes')
      .expect(403);
  });

  it('a body left as text by express.text() is still parsed for the policy', async () => {
    const text = makeApp({ authorizationServers: [as.issuer] });
    const app = express();
    app.use(express.text({ type: 'application/json' }));
    app.all('/mcp', text.rs.protect, (req, res) => void res.json({ body: req.body }));
    try {
      await request(app)
        .post('/mcp')
        .set('Authorization', `Bearer ${readToken}`)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(rpc('tools/call', { name: 'add_note' })))
        .expect(403);
    } finally {
      await text.rs.close();
    }
  });

  it('a tool name hidden in a prototype key does not escape the policy', async () => {
    const body = JSON.parse(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_note","__proto__":{"name":"x"}}}',
    ) as object;
    await post(body, readToken).expect(403);
  });
});

describe('rs.protect: its own failures are 500, never a sign-in challenge', () => {
  it('a fault inside the middleware (here: the clock throws) → 500 server_error without WWW-Authenticate, logged', async () => {
    let broken = false;
    const faulty = makeApp({
      authorizationServers: [as.issuer],
      allowedHosts: ['localhost:3000'],
      now: () => {
        if (broken) throw new TypeError('clock unavailable');
        return Date.now();
      },
    });
    try {
      broken = true;
      const res = await postMcp(faulty.app, rpc('ping'), { host: 'localhost:3000', token: readToken });
      expect(res.status).toBe(500);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(res.body).toEqual({ error: 'server_error', error_description: 'The resource server failed to process the request' });
      expect(JSON.stringify(res.body)).not.toContain('clock unavailable');
      expect(faulty.logs.some((entry) => JSON.stringify(entry).includes('internal_error'))).toBe(true);
      // what the request did is still answered as before
      broken = false;
      await postMcp(faulty.app, rpc('ping'), { host: 'localhost:3000', authorization: 'Bearer not-a-jwt' }).expect(401);
    } finally {
      await faulty.rs.close();
    }
  });
});

describe('rs.protect: req.auth (the MCP SDK AuthInfo)', () => {
  it('resource is a read-only URL of the protected resource: a handler cannot change it for the next, can clear its own, and copies keep it', async () => {
    const seen: unknown[] = [];
    const app = express();
    app.all('/mcp', t.rs.protect, (req: express.Request & { auth?: { resource?: URL } }, res) => {
      const auth = req.auth!;
      const copy = { ...auth };
      seen.push([auth.resource?.href, copy.resource?.href, (JSON.parse(JSON.stringify(auth)) as { resource?: unknown }).resource]);
      const refusals: string[] = [];
      const attempts: Array<() => void> = [
        () => {
          auth.resource!.pathname = '/changed';
        },
        () => {
          auth.resource!.href = 'https://attacker.example/mcp';
        },
        () => auth.resource!.searchParams.set('x', '1'),
      ];
      for (const attempt of attempts) {
        try {
          attempt();
        } catch (err) {
          refusals.push((err as Error).name);
        }
      }
      const unchanged = auth.resource?.href;
      // a copy is an ordinary URL
      const own = new URL(auth.resource!);
      own.pathname = '/changed';
      auth.resource = undefined;
      res.json({
        refusals,
        unchanged,
        isUrl: copy.resource instanceof URL,
        own: own.href,
        cleared: auth.resource ?? null,
        copy: copy.resource?.href,
      });
    });
    for (let i = 0; i < 2; i++) {
      const res = await postMcp(app, rpc('ping'), { host: 'localhost:3000', token: readToken });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        refusals: ['TypeError', 'TypeError', 'TypeError'],
        unchanged: 'http://localhost:3000/mcp',
        isUrl: true,
        own: 'http://localhost:3000/changed',
        cleared: null,
        copy: 'http://localhost:3000/mcp',
      });
    }
    const resource = 'http://localhost:3000/mcp';
    expect(seen).toEqual([
      [resource, resource, resource],
      [resource, resource, resource],
    ]);
  });

  it.each([
    ['cached', true],
    ['cache off', false],
  ])(
    'the claims a handler sees are frozen (%s): changing them cannot change how the next request is checked (DPoP binding, revocation)',
    async (_label, cache) => {
      const revocation = new MemoryRevocationList();
      const served = makeApp({ authorizationServers: [as.issuer], revocation, ...(cache ? {} : { cache: false as const }) });
      const attempts: Record<string, (claims: Record<string, unknown>) => void> = {
        // a cnf would make the next Bearer use of this token a refused downgrade (RFC 9449 §7.2)
        addCnf: (claims) => {
          claims.cnf = { jkt: 'attacker' };
        },
        // without its grant_id the token would escape revocation
        dropGrant: (claims) => {
          delete claims.grant_id;
        },
        changeGrant: (claims) => {
          claims.grant_id = 'another-grant';
        },
        nested: (claims) => {
          (claims.act as Record<string, unknown>).sub = 'someone-else';
        },
      };
      const app = express();
      app.all('/mcp', served.rs.protect, (req: express.Request & { auth?: { scopes: string[]; extra?: Record<string, unknown> } }, res) => {
        const claims = req.auth!.extra!.claims as Record<string, unknown>;
        const refused: string[] = [];
        for (const [name, attempt] of Object.entries(attempts)) {
          try {
            attempt(claims);
          } catch (err) {
            if (err instanceof TypeError) refused.push(name);
          }
        }
        // the request's own scopes array is its own copy: changing it is allowed and stays here
        req.auth!.scopes.push('notes:write');
        res.json({ refused, grant: claims.grant_id, cnf: claims.cnf ?? null, act: claims.act });
      });
      const token = await signToken({
        key,
        issuer: as.issuer,
        claims: { scope: 'notes:read', grant_id: 'g-frozen', act: { sub: 'agent' } },
      });
      const send = () => request(app).post('/mcp').set('Host', 'localhost:3000').set('Authorization', `Bearer ${token}`).send(rpc('ping'));
      try {
        for (let i = 0; i < 2; i++) {
          const res = await send();
          expect(res.status).toBe(200);
          expect(res.body).toEqual({
            refused: ['addCnf', 'dropGrant', 'changeGrant', 'nested'],
            grant: 'g-frozen',
            cnf: null,
            act: { sub: 'agent' },
          });
        }
        // one verification served both requests with the cache on, one each with it off
        expect(verifierOf(served.rs).cacheSize).toBe(cache ? 1 : 0);
        // the grant is still the token's: revoking it refuses the token
        revocation.revoke('g-frozen', Date.now() + 60_000);
        const refused = await send();
        expect(refused.status).toBe(401);
        expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
      } finally {
        await served.rs.close();
      }
    },
  );
});
