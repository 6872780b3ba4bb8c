import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOAuthError } from '@mcp-auth-kit/test-utils';
import request from 'supertest';
import { CompactSign, FlattenedSign, generateSecret, importJWK, SignJWT, exportSPKI } from 'jose';
import {
  b64url,
  parseChallenge,
  makeApp,
  makeKey,
  RESOURCE,
  rpc,
  signToken,
  startIssuerWithKey,
  StubIssuer,
  type SigningKey,
  type TestApp,
} from './helpers/harness.js';
import { verifyJwtAccessToken } from '../src/core.js';

let as: StubIssuer;
let other: StubIssuer;
let key: SigningKey;
let t: TestApp;

beforeAll(async () => {
  ({ as, key } = await startIssuerWithKey());
  ({ as: other } = await startIssuerWithKey());
  t = makeApp({ authorizationServers: [as.issuer], cache: false });
});
afterAll(async () => {
  await t.rs.close();
  await as.stop();
  await other.stop();
});

const now = () => Math.floor(Date.now() / 1000);

function call(token: string) {
  return request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('tools/list'));
}

function lastReason(): unknown {
  return t.logs.at(-1)?.details?.reason;
}

/** A ping to `app` with a token signed by `signer` for `issuer`. */
async function ping(app: TestApp, signer: SigningKey, issuer: string, now?: number) {
  const token = await signToken({ key: signer, issuer, ...(now === undefined ? {} : { now }) });
  return request(app.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping'));
}

/** A fresh issuer (options as given) serving one new ES256 key, and an app trusting it; both closed after `run`. */
async function withIssuer(
  issuerOptions: ConstructorParameters<typeof StubIssuer>[0],
  appOptions: Omit<Parameters<typeof makeApp>[0], 'authorizationServers'>,
  run: (server: StubIssuer, k: SigningKey, app: TestApp) => Promise<void>,
) {
  const server = await new StubIssuer(issuerOptions).start();
  const k = await makeKey('ES256');
  server.keys = [k];
  const app = makeApp({ authorizationServers: [server.issuer], cache: false, ...appOptions });
  try {
    await run(server, k, app);
  } finally {
    await app.rs.close();
    await server.stop();
  }
}

async function expectInvalidToken(token: string, reason: string) {
  const res = await call(token);
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
  expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  expect(res.headers['www-authenticate']).toContain('resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp"');
  expect(res.body.error).toBe('invalid_token');
  // only the registered code and a fixed description reach the wire
  expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
  expect(['The access token is invalid', 'The access token expired', 'The access token could not be verified']).toContain(
    res.body.error_description,
  );
  expect(Object.keys(parseChallenge(res.headers['www-authenticate'] as string).params)).toEqual([
    'error',
    'error_description',
    'scope',
    'resource_metadata',
  ]);
  expect(lastReason()).toBe(reason);
  // the token never reaches the logs
  expect(JSON.stringify(t.logs)).not.toContain(token);
  return res;
}

describe('JWT access token validation (RFC 9068 §4, MCP §Token Handling)', () => {
  it('accepts a valid token and sets req.auth in the MCP SDK AuthInfo shape', async () => {
    const token = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read notes:write', jti: 'jti-1' } });
    const res = await call(token).expect(200);
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(res.body.auth).toEqual({
      token,
      clientId: 'client-1',
      scopes: ['notes:read', 'notes:write'],
      expiresAt: payload.exp,
      resource: RESOURCE, // URL serialises to its href
      resourceMetadataUrl: 'http://localhost:3000/.well-known/oauth-protected-resource/mcp',
      extra: { sub: 'user-1', iss: as.issuer, jti: 'jti-1', claims: payload, tokenType: 'jwt' },
    });
    expect(res.body.body).toEqual(rpc('tools/list'));
  });

  it('accepts typ "application/at+jwt" (RFC 9068 §4)', async () => {
    await call(await signToken({ key, issuer: as.issuer, header: { typ: 'application/at+jwt' } })).expect(200);
  });

  it('RFC 8725 §3.1: alg "none" is refused', async () => {
    const token = `${b64url({ alg: 'none', typ: 'at+jwt' })}.${b64url({ iss: as.issuer, sub: 'u', aud: RESOURCE, exp: now() + 60, iat: now(), jti: 'x', client_id: 'c' })}.`;
    await expectInvalidToken(token, 'alg_not_allowed');
  });

  it('RFC 8725 §2.1: HS256 signed with the public key bytes (algorithm confusion) is refused', async () => {
    const rsa = await makeKey('RS256');
    as.keys = [key, rsa];
    try {
      const pem = await exportSPKI((await import('node:crypto')).createPublicKey({ key: rsa.publicJwk as never, format: 'jwk' }) as never);
      const token = await new SignJWT({ sub: 'u', aud: RESOURCE, jti: 'x', client_id: 'c', scope: 'notes:read' })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: rsa.kid })
        .setIssuer(as.issuer)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(pem));
      await expectInvalidToken(token, 'alg_not_allowed');
      const hs = await new SignJWT({ sub: 'u', aud: RESOURCE, jti: 'x', client_id: 'c' })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
        .setIssuer(as.issuer)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(await generateSecret('HS256'));
      await expectInvalidToken(hs, 'alg_not_allowed');
    } finally {
      as.keys = [key];
    }
  });

  it('RFC 9068 §4: missing typ is refused', async () => {
    await expectInvalidToken(await signToken({ key, issuer: as.issuer, header: { typ: undefined } }), 'typ_invalid');
  });

  it.each(['JWT', 'jwt', 'application/jwt', 'at+jwt2'])('RFC 9068 §4: typ %j is refused', async (typ) => {
    await expectInvalidToken(await signToken({ key, issuer: as.issuer, header: { typ } }), 'typ_invalid');
  });

  it('RFC 9068 §4 / RFC 8725 §3.1: tokens with different headers in turn each get their own header checks', async () => {
    // one verifier, several keys and algorithms: no header's outcome carries over to the next token
    const issuer = await new StubIssuer().start();
    const ec = await makeKey('ES256');
    const rsa = await makeKey('RS256');
    issuer.keys = [ec, rsa];
    const app = makeApp({ authorizationServers: [issuer.issuer], cache: false });
    const send = (token: string) => request(app.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping'));
    try {
      const good = await signToken({ key: ec, issuer: issuer.issuer });
      const goodRsa = await signToken({ key: rsa, issuer: issuer.issuer });
      const badTyp = await signToken({ key: ec, issuer: issuer.issuer, header: { typ: 'JWT' } });
      const noTyp = await signToken({ key: rsa, issuer: issuer.issuer, header: { typ: undefined } });
      for (let round = 0; round < 2; round++) {
        expect((await send(good)).status).toBe(200);
        expect((await send(badTyp)).status).toBe(401);
        expect(app.logs.at(-1)?.details?.reason).toBe('typ_invalid');
        expect((await send(goodRsa)).status).toBe(200);
        expect((await send(noTyp)).status).toBe(401);
        expect(app.logs.at(-1)?.details?.reason).toBe('typ_invalid');
        expect((await send(goodRsa)).status).toBe(200);
        expect((await send(good)).status).toBe(200);
      }
    } finally {
      await app.rs.close();
      await issuer.stop();
    }
  });

  it('a foreign key with the same kid fails the signature check', async () => {
    const impostor = await makeKey('ES256', key.kid);
    await expectInvalidToken(await signToken({ key: impostor, issuer: as.issuer }), 'signature_invalid');
  });

  it('a tampered payload fails the signature check', async () => {
    const token = await signToken({ key, issuer: as.issuer });
    const [h, , s] = token.split('.');
    const forged = `${h}.${b64url({ iss: as.issuer, sub: 'admin', aud: RESOURCE, exp: now() + 60, iat: now(), jti: 'x', client_id: 'c', scope: 'notes:write' })}.${s}`;
    await expectInvalidToken(forged, 'signature_invalid');
  });

  it('RFC 7797 §7: a token signed over an unencoded payload (b64: false) is refused, though its signature is valid', async () => {
    // The claims are read from the token's base64url payload segment; an unencoded payload would
    // make the signed bytes and the decoded claims two different things.
    const claims = {
      iss: as.issuer,
      sub: 'user-1',
      aud: RESOURCE,
      exp: now() + 60,
      iat: now(),
      jti: 'b64',
      client_id: 'c',
      scope: 'notes:read',
    };
    const payload = b64url(claims);
    const jws = await new FlattenedSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt', b64: false, crit: ['b64'] })
      .sign(key.privateKey);
    // jose leaves an unencoded payload out of its output (detached): put the signed text back
    const token = `${jws.protected}.${payload}.${jws.signature}`;
    await expectInvalidToken(token, 'token_malformed');
  });

  it('RFC 7519 §7.2 / RFC 8259 §8.1: claims in UTF-8 beyond ASCII are read as the text that was signed', async () => {
    const token = await signToken({
      key,
      issuer: as.issuer,
      claims: { sub: 'zoë-ĳ-日本-😀', name: 'Ünïcödé \u2028 "quoted" \\ end', client_id: 'c-é' },
    });
    const verified = await t.rs.verifyAccessToken(token);
    expect(verified.subject).toBe('zoë-ĳ-日本-😀');
    expect(verified.clientId).toBe('c-é');
    expect(verified.claims.name).toBe('Ünïcödé \u2028 "quoted" \\ end');
  });

  /** A compact JWS over `payload` bytes exactly as given (SignJWT would encode a valid JSON text). */
  async function signRawPayload(payload: Uint8Array): Promise<string> {
    return new CompactSign(payload).setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' }).sign(key.privateKey);
  }

  it('RFC 7519 §7.2 step 8: a signed payload that is not valid UTF-8 is refused (token_malformed)', async () => {
    const json = Buffer.from(
      JSON.stringify({ iss: as.issuer, sub: 'user-1', aud: RESOURCE, exp: now() + 60, iat: now(), jti: 'u', client_id: 'c', x: 'XX' }),
    );
    const bad = json.indexOf('XX');
    json[bad] = 0xc3; // a lead byte followed by an ASCII byte: not UTF-8
    await expectInvalidToken(await signRawPayload(json), 'token_malformed');
    json[bad] = 0xff; // never valid in UTF-8
    await expectInvalidToken(await signRawPayload(json), 'token_malformed');
  });

  it('RFC 7515 §2 / §7.1: a segment outside the base64url alphabet is refused before any key lookup, though its signature is valid', async () => {
    const token = await signToken({ key, issuer: as.issuer });
    const [h, p, s] = token.split('.') as [string, string, string];
    const before = as.hits.jwks;
    // padding, the base64 (not base64url) alphabet, whitespace, a length no base64 text has:
    // decoders that skip or accept these would read claims from a text other than the one
    // signed. The middleware's token shape check sends all but the last to the opaque path (no
    // introspection here: refused); the exported verifyJwtAccessToken refuses them with the same
    // shape check (JWS_COMPACT) and the length in its decode.
    const lengthOne = p.length % 4 === 0 ? `${p}A` : p.length % 4 === 2 ? `${p}AAA` : `${p}AA`;
    await expectInvalidToken(`${h}.${lengthOne}.${s}`, 'token_malformed');
    const publicKey = await importJWK(key.publicJwk, key.alg);
    const options = { resource: RESOURCE, issuers: [as.issuer], getKeys: () => () => publicKey };
    // (whitespace one and two characters long: one of the two leaves a length base64 can have)
    const whitespace = [' ', '  ', '\n', '\t\t'].map((w) => `${p.slice(0, 8)}${w}${p.slice(8)}`);
    for (const payload of [`+${p.slice(1)}`, `/${p.slice(1)}`, `${p}=`, ...whitespace, lengthOne]) {
      await expect(verifyJwtAccessToken(`${h}.${payload}.${s}`, options)).rejects.toMatchObject({ reason: 'token_malformed' });
      // (a control character cannot be sent in a header at all)
      if (!/[\n\t]/.test(payload)) expect([400, 401]).toContain((await call(`${h}.${payload}.${s}`)).status);
    }
    // the signature segment too: jose's decoder skips whitespace in it, and the signature would
    // still verify, so another spelling of a valid token was accepted by verifyJwtAccessToken
    for (const signature of [`${s.slice(0, 8)} ${s.slice(8)}`, `${s.slice(0, 8)}\n${s.slice(8)}`, `${s}=`, `+${s.slice(1)}`]) {
      await expect(verifyJwtAccessToken(`${h}.${p}.${signature}`, options)).rejects.toMatchObject({ reason: 'token_malformed' });
    }
    await expect(verifyJwtAccessToken(token, options)).resolves.toMatchObject({ subject: 'user-1' });
    expect(as.hits.jwks).toBe(before);
  });

  it('RFC 7519 §7.2: the claims checked are the signed ones (a signed token with a bad nbf type is refused)', async () => {
    await expectInvalidToken(await signToken({ key, issuer: as.issuer, claims: { nbf: 'soon' } }), 'claim_invalid');
    await expectInvalidToken(await signToken({ key, issuer: as.issuer, claims: { iat: '1700000000' } }), 'claim_invalid');
  });

  it('RFC 8414 §3.3 / MCP §Token Handling: a token from another issuer is refused without contacting it', async () => {
    const before = other.hits.metadata;
    await expectInvalidToken(await signToken({ key: other.keys[0]!, issuer: other.issuer }), 'iss_untrusted');
    expect(other.hits.metadata).toBe(before);
  });

  it('a token claiming our issuer but signed by another AS key is refused', async () => {
    await expectInvalidToken(await signToken({ key: other.keys[0]!, issuer: as.issuer }), 'unknown_kid');
  });

  it('MCP §Token Handling / RFC 8707 §2: a token for another audience is refused (no token passthrough)', async () => {
    await expectInvalidToken(await signToken({ key, issuer: as.issuer, claims: { aud: 'http://localhost:4000/mcp' } }), 'aud_mismatch');
    await expectInvalidToken(await signToken({ key, issuer: as.issuer, claims: { aud: ['https://api.example.com'] } }), 'aud_mismatch');
  });

  it.each([
    'http://localhost:3000/mcp/other',
    'http://localhost:3000/MCP',
    'http://localhost:3000/mcp2',
    'http://localhost:3000',
    'https://localhost:3000/mcp',
  ])('MCP §Canonical Server URI: aud %j is a different resource', async (aud) => {
    await expectInvalidToken(await signToken({ key, issuer: as.issuer, claims: { aud } }), 'aud_mismatch');
  });

  it.each(['http://localhost:3000/mcp/', 'HTTP://LocalHost:3000/mcp'])(
    'MCP §Canonical Server URI: aud %j is this resource (case of scheme/host, trailing slash, arrays)',
    async (aud) => {
      const r = await call(await signToken({ key, issuer: as.issuer, claims: { aud } }));
      expect(r.status, JSON.stringify([aud, t.logs.at(-1)])).toBe(200);
    },
  );

  it('RFC 7519 §4.1.3: an aud array that contains this resource is accepted', async () => {
    const aud = ['https://other.example/api', 'http://localhost:3000/mcp'];
    const res = await call(await signToken({ key, issuer: as.issuer, claims: { aud } })).expect(200);
    expect(res.body.auth.extra.claims.aud).toEqual(aud);
  });

  it('MCP §Token Handling: an expired token gets 401 invalid_token', async () => {
    const res = await expectInvalidToken(
      await signToken({ key, issuer: as.issuer, claims: { exp: now() - 31, iat: now() - 600 } }),
      'expired',
    );
    expect(res.body.error_description).toBe('The access token expired');
  });

  it('exp within the 30 s clock tolerance is still accepted', async () => {
    await call(await signToken({ key, issuer: as.issuer, claims: { exp: now() - 10, iat: now() - 600 } })).expect(200);
  });

  it('a not-yet-valid token (nbf beyond tolerance) is refused', async () => {
    await expectInvalidToken(await signToken({ key, issuer: as.issuer, claims: { nbf: now() + 120 } }), 'not_yet_valid');
  });

  it.each(['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'])('RFC 9068 §2.2: missing %s is refused', async (claim) => {
    const res = await call(await signToken({ key, issuer: as.issuer, claims: { [claim]: undefined } }));
    expectOAuthError(res, 'invalid_token', 401);
    expect(['missing_claim', 'aud_mismatch', 'claim_invalid']).toContain(lastReason());
  });

  it.each([
    ['client_id', 42],
    ['sub', ''],
    ['scope', ['notes:read']],
    ['exp', 'tomorrow'],
  ])('claim %s = %j is refused', async (claim, value) => {
    const res = await call(await signToken({ key, issuer: as.issuer, claims: { [claim]: value } }));
    expectOAuthError(res, 'invalid_token', 401);
  });

  it.each(['not-a-jwt', 'a.b.c', 'e30.e30.', `${b64url('{')}.${b64url('{}')}.sig`])(
    'malformed token %j → 401 invalid_token',
    async (token) => {
      const res = await call(token);
      expectOAuthError(res, 'invalid_token', 401);
    },
  );

  it('opaque tokens are refused when no introspection is configured', async () => {
    await expectInvalidToken('opaque-token-value', 'opaque_token_unsupported');
  });
});

describe('JWKS retrieval (RFC 8414 jwks_uri, cached, refetch on unknown kid, fail closed)', () => {
  it('unknown kid triggers one refetch; a key added at the AS is then accepted', async () => {
    await withIssuer({}, { jwks: { cooldownMs: 0 } }, async (server, first, app) => {
      expect((await ping(app, first, server.issuer)).status).toBe(200);
      expect(server.hits.jwks).toBe(1);
      expect((await ping(app, first, server.issuer)).status).toBe(200);
      expect(server.hits.jwks).toBe(1); // cached
      const rotated = await makeKey('ES256');
      server.keys = [first, rotated];
      expect((await ping(app, rotated, server.issuer)).status).toBe(200);
      expect(server.hits.jwks).toBe(2);
      expect(server.hits.metadata).toBe(1);
    });
  });

  it('within the cooldown an unknown kid does not refetch (no JWKS hammering) and is refused', async () => {
    await withIssuer({}, {}, async (server, first, app) => {
      expect((await ping(app, first, server.issuer)).status).toBe(200);
      const stranger = await makeKey('ES256');
      for (let i = 0; i < 3; i++) {
        const res = await ping(app, stranger, server.issuer);
        expect(res.status).toBe(401);
        expect(app.logs.at(-1)?.details?.reason).toBe('unknown_kid');
      }
      expect(server.hits.jwks).toBe(1);
    });
  });

  it('fail closed, and an outage is not an invalid token: JWKS endpoint failing → 503 + Retry-After, no invalid_token challenge (RFC 9110 §15.6.4, RFC 6750 §3.1); the token works once the JWKS answers', async () => {
    await withIssuer({}, {}, async (server, k, app) => {
      server.jwksStatus = 500;
      const token = await signToken({ key: k, issuer: server.issuer });
      const res = await request(app.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping'));
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
      // an invalid_token challenge would send the client to discard its tokens and sign in again
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(res.body.error).toBe('temporarily_unavailable');
      expect(app.logs.at(-1)?.details?.reason).toBe('keys_unavailable');
      server.jwksStatus = 200;
      expect((await request(app.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('ping'))).status).toBe(200);
    });
  });

  it('fail closed: authorization server unreachable → 503 + Retry-After, no challenge', async () => {
    const server = await new StubIssuer().start();
    const k = await makeKey('ES256');
    const issuer = server.issuer;
    await server.stop();
    const app = makeApp({ authorizationServers: [issuer], cache: false, jwks: { timeoutMs: 2000 } });
    try {
      const res = await ping(app, k, issuer);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBeDefined();
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(app.logs.at(-1)?.details?.reason).toBe('keys_unavailable');
    } finally {
      await app.rs.close();
    }
  });

  it('a failed discovery is remembered for failureCooldownMs, then retried', async () => {
    let clock = Date.now();
    await withIssuer({}, { now: () => clock, jwks: { failureCooldownMs: 5000 } }, async (server, k, app) => {
      server.metadataStatus = 503;
      const send = () => ping(app, k, server.issuer, Math.floor(clock / 1000));
      expect((await send()).status).toBe(503);
      const hitsAfterFailure = server.hits.metadata; // both discovery URLs were tried
      server.metadataStatus = 200;
      expect((await send()).status).toBe(503); // still cooling down: AS not asked again
      expect(server.hits.metadata).toBe(hitsAfterFailure);
      clock += 5000;
      expect((await send()).status).toBe(200);
    });
  });

  it.each(['oauth', 'oidc-insert', 'oidc-append'] as const)(
    'MCP §Authorization Server Metadata Discovery: issuer with a path, %s document',
    async (discovery) => {
      await withIssuer({ path: '/tenant1', discovery }, {}, async (server, k, app) => {
        expect((await ping(app, k, server.issuer)).status).toBe(200);
      });
    },
  );

  it('OIDC fallback for a root issuer', async () => {
    await withIssuer({ discovery: 'oidc-insert' }, {}, async (server, k, app) => {
      expect((await ping(app, k, server.issuer)).status).toBe(200);
    });
  });

  it('RFC 8414 §3.3: metadata whose issuer differs from the configured one is not used (fail closed: 503, never accepted)', async () => {
    await withIssuer({ advertisedIssuer: 'https://honest.example' }, {}, async (server, k, app) => {
      const res = await ping(app, k, server.issuer);
      // never accepted; the metadata cannot be used, which the client cannot fix by signing in again
      expect(res.status).toBe(503);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(app.logs.at(-1)?.details?.reason).toBe('keys_unavailable');
      expect(server.hits.jwks).toBe(0);
    });
  });

  it('several authorization servers: each token is checked with its own issuer keys', async () => {
    const a = await new StubIssuer().start();
    const b = await new StubIssuer().start();
    a.keys = [await makeKey('ES256')];
    b.keys = [await makeKey('RS256')];
    const app = makeApp({ authorizationServers: [a.issuer, b.issuer], cache: false });
    try {
      for (const s of [a, b]) expect((await ping(app, s.keys[0]!, s.issuer)).status).toBe(200);
      // b's key presented as a's token
      expect((await ping(app, b.keys[0]!, a.issuer)).status).toBe(401);
    } finally {
      await app.rs.close();
      await a.stop();
      await b.stop();
    }
  });

  it('algorithm allowlist option narrows what is accepted', async () => {
    const app = makeApp({ authorizationServers: [as.issuer], cache: false, algorithms: ['RS256'] });
    try {
      expect((await ping(app, key, as.issuer)).status).toBe(401);
      expect(app.logs.at(-1)?.details?.reason).toBe('alg_not_allowed');
    } finally {
      await app.rs.close();
    }
  });
});
