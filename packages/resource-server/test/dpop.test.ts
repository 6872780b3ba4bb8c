// RFC 9449 (DPoP) at the resource server, through real HTTP (supertest on the express adapter).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, SignJWT, type JWK } from 'jose';
import { respeltSignature } from '@mcp-auth-kit/test-utils';
import {
  makeApp,
  startIssuerWithKey,
  parseChallenge,
  RESOURCE,
  rpc,
  signToken,
  stopServers,
  type StubIssuer,
  type SigningKey,
  type TestApp,
} from './helpers/harness.js';
import { ath, makeProof, proofKey, unsignedJwt, type ProofKey } from './helpers/dpop.js';
import { ConfigError } from '../src/index.js';

let as: StubIssuer;
let signing: SigningKey;
let pk: ProofKey;
let other: ProofKey;
let t: TestApp;

beforeAll(async () => {
  ({ as, key: signing } = await startIssuerWithKey());
  pk = await proofKey('ES256');
  other = await proofKey('ES256');
  t = makeApp({ authorizationServers: [as.issuer], dpop: true });
});
afterAll(() => stopServers(t.rs, as));

/** An access token bound to `key` (cnf.jkt, RFC 9449 §6.1). */
function boundToken(key: ProofKey = pk, claims: Record<string, unknown> = {}): Promise<string> {
  return signToken({ key: signing, issuer: as.issuer, claims: { cnf: { jkt: key.jkt }, ...claims } });
}

function dpopCall(app: TestApp['app'], token: string, proof: string | string[] | undefined, body: unknown = rpc('tools/list')) {
  const req = request(app).post('/mcp').set('Authorization', `DPoP ${token}`);
  // an array is sent as repeated header fields
  if (proof !== undefined) req.set('DPoP', proof as string);
  return req.send(body as object);
}

function lastReason(logs: TestApp['logs'] = t.logs): unknown {
  return logs.at(-1)?.details?.reason;
}

/** Splits `Bearer a="b", DPoP c="d"` into its challenges. */
function challenges(header: string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  const parts = header.split(/,\s*(?=(?:Bearer|DPoP)(?:\s|$))/);
  for (const part of parts) {
    const parsed = parseChallenge(part.trim());
    out[parsed.scheme] = parsed.params;
  }
  return out;
}

async function expectProofRefused(res: request.Response, reason: string, logs: TestApp['logs'] = t.logs) {
  expect(res.status).toBe(401);
  const c = challenges(res.headers['www-authenticate'] as string);
  expect(c.DPoP?.error).toBe('invalid_dpop_proof');
  expect(c.DPoP?.algs).toContain('ES256');
  // the Bearer challenge (both schemes accepted) carries no error for a DPoP request
  expect(c.Bearer?.error).toBeUndefined();
  expect(res.body.error).toBe('invalid_dpop_proof');
  expect(lastReason(logs)).toBe(reason);
}

/** A 401 `invalid_token` in the challenge of the scheme the request used (`scheme`), none in the other's. */
function expectTokenRefused(res: request.Response, scheme: 'Bearer' | 'DPoP', reason: string) {
  expect(res.status).toBe(401);
  const c = challenges(res.headers['www-authenticate'] as string);
  expect(c[scheme]?.error).toBe('invalid_token');
  expect(c[scheme === 'DPoP' ? 'Bearer' : 'DPoP']?.error).toBeUndefined();
  expect(lastReason()).toBe(reason);
}

describe('RFC 9449 DPoP at the resource server', () => {
  it('RFC 9449 §7.1: a DPoP-bound token with a valid proof is accepted; req.auth carries the scheme and jkt', async () => {
    const token = await boundToken();
    const res = await dpopCall(t.app, token, await makeProof({ key: pk, token }));
    expect(res.status).toBe(200);
    expect(res.body.auth.token).toBe(token);
    expect(res.body.auth.extra.scheme).toBe('DPoP');
    expect(res.body.auth.extra.jkt).toBe(pk.jkt);
  });

  it('RFC 9449 §7.1: the scheme name is case-insensitive and htm is the request method (GET)', async () => {
    const token = await boundToken();
    const res = await request(t.app)
      .get('/mcp')
      .set('Authorization', `dpop ${token}`)
      .set('DPoP', await makeProof({ key: pk, token, htm: 'GET' }));
    expect(res.status).toBe(200);
  });

  it('RFC 9728 §2 / RFC 9449 §5.2: the PRM advertises dpop_signing_alg_values_supported and dpop_bound_access_tokens_required', async () => {
    const res = await request(t.app).get('/.well-known/oauth-protected-resource/mcp').expect(200);
    expect(res.body.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA', 'PS256', 'RS256']));
    expect(res.body.dpop_signing_alg_values_supported).not.toContain('HS256');
    expect(res.body.dpop_bound_access_tokens_required).toBe(false);
    const required = makeApp({ authorizationServers: [as.issuer], dpop: { required: true, algorithms: ['ES256'] } });
    const doc = await request(required.app).get('/.well-known/oauth-protected-resource/mcp').expect(200);
    expect(doc.body.dpop_signing_alg_values_supported).toEqual(['ES256']);
    expect(doc.body.dpop_bound_access_tokens_required).toBe(true);
    const bearerOnly = makeApp({ authorizationServers: [as.issuer], extraMetadata: { dpop_signing_alg_values_supported: ['ES256'] } });
    const plain = await request(bearerOnly.app).get('/.well-known/oauth-protected-resource/mcp').expect(200);
    // never advertised by a server that does not check proofs, even through extraMetadata
    expect(plain.body.dpop_signing_alg_values_supported).toBeUndefined();
    await Promise.all([required.rs.close(), bearerOnly.rs.close()]);
  });

  it('RFC 9449 §7.1 / §7.2: without credentials the 401 offers Bearer and DPoP (algs) challenges, no error', async () => {
    const res = await request(t.app).post('/mcp').send(rpc('tools/list'));
    expect(res.status).toBe(401);
    const header = res.headers['www-authenticate'] as string;
    expect(header).toMatch(/^Bearer /);
    const c = challenges(header);
    expect(c.Bearer).toEqual({ scope: 'notes:read', resource_metadata: 'http://localhost:3000/.well-known/oauth-protected-resource/mcp' });
    expect(c.DPoP).toEqual({
      scope: 'notes:read',
      resource_metadata: 'http://localhost:3000/.well-known/oauth-protected-resource/mcp',
      algs: 'ES256 ES384 ES512 EdDSA Ed25519 PS256 PS384 PS512 RS256 RS384 RS512',
    });
  });

  it('RFC 9449 §4.3 (1): a DPoP request without a DPoP header is refused (invalid_dpop_proof)', async () => {
    const token = await boundToken();
    await expectProofRefused(await dpopCall(t.app, token, undefined), 'dpop_proof_missing');
  });

  it('RFC 9449 §4.3 (1): two DPoP header fields are refused', async () => {
    const token = await boundToken();
    const res = await dpopCall(t.app, token, [await makeProof({ key: pk, token }), await makeProof({ key: pk, token })]);
    await expectProofRefused(res, 'dpop_proof_multiple');
  });

  it('RFC 9449 §4.3 (2): a DPoP header that is not a JWS compact JWT is refused', async () => {
    const token = await boundToken();
    await expectProofRefused(await dpopCall(t.app, token, 'not-a-jwt'), 'dpop_proof_malformed');
    await expectProofRefused(await dpopCall(t.app, token, 'a.b.c'), 'dpop_proof_malformed');
    // a real proof without its signature, with a space inside it (RFC 7515 §7.1: base64url only)
    // or with its signature spelt another way (RFC 4648 §3.5: the same bytes, and a new replay key)
    const proof = await makeProof({ key: pk, token });
    const [h, p, s] = proof.split('.');
    await expectProofRefused(await dpopCall(t.app, token, `${h}.${p}.`), 'dpop_proof_malformed');
    await expectProofRefused(await dpopCall(t.app, token, `${h}.${p}.${s!.slice(0, 8)} ${s!.slice(8)}`), 'dpop_proof_malformed');
    await expectProofRefused(await dpopCall(t.app, token, respeltSignature(proof)), 'dpop_proof_malformed');
  });

  it('RFC 9449 §4.3 (3): a proof without jti, htm, htu or iat is refused', async () => {
    const token = await boundToken();
    for (const claim of ['jti', 'htm', 'htu', 'iat']) {
      const proof = await makeProof({ key: pk, token, claims: { [claim]: undefined } });
      await expectProofRefused(await dpopCall(t.app, token, proof), 'dpop_claim_invalid');
    }
  });

  it('RFC 9449 §4.3 (4): typ must be dpop+jwt (a JWT or at+jwt is refused)', async () => {
    const token = await boundToken();
    for (const typ of ['JWT', 'at+jwt', undefined]) {
      const proof = await makeProof({ key: pk, token, header: { typ } });
      await expectProofRefused(await dpopCall(t.app, token, proof), 'dpop_typ_invalid');
    }
  });

  it('RFC 9449 §4.3 (5): alg "none" and HS256 proofs are refused', async () => {
    const token = await boundToken();
    const claims = { jti: 'x', htm: 'POST', htu: RESOURCE, iat: Math.floor(Date.now() / 1000), ath: ath(token) };
    const none = `${unsignedJwt({ alg: 'none', typ: 'dpop+jwt', jwk: pk.publicJwk }, claims)}c2ln`;
    await expectProofRefused(await dpopCall(t.app, token, none), 'dpop_alg_not_allowed');
    const secret = new Uint8Array(32).fill(7);
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: { kty: 'oct', k: Buffer.from(secret).toString('base64url') } } as never)
      .sign(secret);
    await expectProofRefused(await dpopCall(t.app, token, hs), 'dpop_alg_not_allowed');
  });

  it('RFC 9449 §4.3 (5): an algorithm outside the configured allowlist is refused', async () => {
    const eddsa = await proofKey('EdDSA');
    const only = makeApp({ authorizationServers: [as.issuer], dpop: { algorithms: ['ES256'] } });
    const token = await boundToken(eddsa);
    await expectProofRefused(await dpopCall(only.app, token, await makeProof({ key: eddsa, token })), 'dpop_alg_not_allowed', only.logs);
    await only.rs.close();
  });

  it('RFC 9449 §4.3 (6): a proof not signed by its embedded jwk is refused', async () => {
    const token = await boundToken();
    const proof = await makeProof({ key: pk, token, signWith: other.privateKey });
    await expectProofRefused(await dpopCall(t.app, token, proof), 'dpop_signature_invalid');
  });

  it('RFC 9449 §4.3 (7): a private key in the proof jwk is refused', async () => {
    const token = await boundToken();
    const proof = await makeProof({ key: pk, token, header: { jwk: pk.privateJwk } });
    await expectProofRefused(await dpopCall(t.app, token, proof), 'dpop_jwk_private');
  });

  it('RFC 9449 §4.3 (7): a missing or symmetric jwk is refused', async () => {
    const token = await boundToken();
    await expectProofRefused(
      await dpopCall(t.app, token, await makeProof({ key: pk, token, header: { jwk: undefined } })),
      'dpop_jwk_invalid',
    );
    const oct = await makeProof({ key: pk, token, header: { jwk: { kty: 'oct', k: 'AAAA' } } });
    await expectProofRefused(await dpopCall(t.app, token, oct), 'dpop_jwk_invalid');
  });

  it('RFC 9449 §4.3 (6): once a client key has verified a proof, every later proof with it is still checked (forged signature refused)', async () => {
    const token = await boundToken();
    expect((await dpopCall(t.app, token, await makeProof({ key: pk, token }))).status).toBe(200);
    // the same jwk, signed by someone else: the key is remembered, the signature is not
    const forged = await makeProof({ key: pk, token, signWith: other.privateKey });
    await expectProofRefused(await dpopCall(t.app, token, forged), 'dpop_signature_invalid');
    // and a signature respelt (the same bytes written another way) is no valid signature either
    await expectProofRefused(await dpopCall(t.app, token, respeltSignature(await makeProof({ key: pk, token }))), 'dpop_proof_malformed');
    expect((await dpopCall(t.app, token, await makeProof({ key: pk, token }))).status).toBe(200);
  });

  it('RFC 9449 §4.3 (6)–(7): a jwk written differently from a remembered one is judged on its own (key_ops refused)', async () => {
    const token = await boundToken();
    expect((await dpopCall(t.app, token, await makeProof({ key: pk, token }))).status).toBe(200);
    // the same public key, but declared for encryption: WebCrypto refuses to import it for verify
    const declaredForEncryption = await makeProof({ key: pk, token, header: { jwk: { ...pk.publicJwk, key_ops: ['encrypt'] } } });
    await expectProofRefused(await dpopCall(t.app, token, declaredForEncryption), 'dpop_jwk_invalid');
  });

  it('RFC 9449 §4.3 (5)–(6): one RSA key used under RS256 and then PS256 verifies under each (a remembered key is per algorithm)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
    const rsa: ProofKey = {
      alg: 'RS256',
      privateKey: privateKey as unknown as ProofKey['privateKey'],
      publicJwk,
      privateJwk: privateKey.export({ format: 'jwk' }) as JWK,
      jkt: await calculateJwkThumbprint(publicJwk),
    };
    const token = await boundToken(rsa);
    for (const alg of ['RS256', 'PS256', 'RS256']) {
      const res = await dpopCall(t.app, token, await makeProof({ key: { ...rsa, alg }, token }));
      expect(res.status, alg).toBe(200);
      expect(res.body.auth.extra.jkt).toBe(rsa.jkt);
    }
  });

  it('RFC 9449 §4.3 (8): htm must match the request method', async () => {
    const token = await boundToken();
    await expectProofRefused(await dpopCall(t.app, token, await makeProof({ key: pk, token, htm: 'GET' })), 'dpop_htm_mismatch');
    await expectProofRefused(await dpopCall(t.app, token, await makeProof({ key: pk, token, htm: 'post' })), 'dpop_htm_mismatch');
  });

  it('RFC 9449 §4.3 (9): htu must be this endpoint (another path, host or scheme is refused)', async () => {
    const token = await boundToken();
    for (const htu of [
      'http://localhost:3000/other',
      'http://evil.example/mcp',
      'https://localhost:3000/mcp',
      'http://localhost:3001/mcp',
      'not a url',
    ]) {
      await expectProofRefused(await dpopCall(t.app, token, await makeProof({ key: pk, token, htu })), 'dpop_htu_mismatch');
    }
  });

  it('RFC 9449 §4.3 (9): htu is compared without query and fragment, after RFC 3986 normalisation', async () => {
    for (const htu of [
      'http://localhost:3000/mcp?x=1#frag',
      'HTTP://LOCALHOST:80/../mcp'.replace(':80', ':3000'),
      'http://localhost:3000/%6dcp',
    ]) {
      const token = await boundToken();
      const res = await dpopCall(t.app, token, await makeProof({ key: pk, token, htu }));
      expect(res.status, htu).toBe(200);
    }
  });

  it('RFC 9449 §4.3 (9): the public URL option replaces the resource as the expected htu (proxies)', async () => {
    const proxied = makeApp({ authorizationServers: [as.issuer], dpop: { publicUrl: 'https://mcp.example.com/mcp' } });
    const token = await boundToken();
    const ok = await dpopCall(proxied.app, token, await makeProof({ key: pk, token, htu: 'https://mcp.example.com/mcp' }));
    expect(ok.status).toBe(200);
    const internal = await dpopCall(proxied.app, token, await makeProof({ key: pk, token }));
    await expectProofRefused(internal, 'dpop_htu_mismatch', proxied.logs);
    await proxied.rs.close();
  });

  it('RFC 9449 §4.3 (11): a stale iat and a future iat are refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const iat of [now - 300, now + 300]) {
      const token = await boundToken();
      await expectProofRefused(await dpopCall(t.app, token, await makeProof({ key: pk, token, iat })), 'dpop_iat_invalid');
    }
  });

  it('RFC 9449 §4.3 (12): a missing ath and a wrong ath are refused', async () => {
    const token = await boundToken();
    await expectProofRefused(await dpopCall(t.app, token, await makeProof({ key: pk })), 'dpop_ath_mismatch');
    const otherToken = await boundToken();
    await expectProofRefused(await dpopCall(t.app, token, await makeProof({ key: pk, token: otherToken })), 'dpop_ath_mismatch');
  });

  it('RFC 9449 §4.3 (13) / §7.1: a proof by another key than cnf.jkt is refused (invalid_token)', async () => {
    const token = await boundToken(pk);
    expectTokenRefused(await dpopCall(t.app, token, await makeProof({ key: other, token })), 'DPoP', 'dpop_key_mismatch');
  });

  it('RFC 9449 §7.1: an unbound (bearer) token presented with the DPoP scheme is refused', async () => {
    const token = await signToken({ key: signing, issuer: as.issuer });
    const res = await dpopCall(t.app, token, await makeProof({ key: pk, token }));
    expect(res.status).toBe(401);
    expect(challenges(res.headers['www-authenticate'] as string).DPoP?.error).toBe('invalid_token');
    expect(lastReason()).toBe('dpop_token_not_bound');
  });

  it('RFC 9449 §11.1: a replayed proof is refused', async () => {
    const token = await boundToken();
    const proof = await makeProof({ key: pk, token });
    expect((await dpopCall(t.app, token, proof)).status).toBe(200);
    await expectProofRefused(await dpopCall(t.app, token, proof), 'dpop_replayed');
  });

  it('RFC 9449 §11.1: concurrent requests with one proof: exactly one succeeds', async () => {
    const token = await boundToken();
    const proof = await makeProof({ key: pk, token });
    const results = await Promise.all([0, 1, 2, 3].map(() => dpopCall(t.app, token, proof)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
  });

  it('RFC 9449 §7.2: a DPoP-bound token presented as Bearer is refused (invalid_token)', async () => {
    const token = await boundToken();
    const res = await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('tools/list'));
    expectTokenRefused(res, 'Bearer', 'dpop_bound_token_as_bearer');
  });

  it('RFC 9449 §7.2: a DPoP-bound token presented as Bearer is refused even where DPoP is off', async () => {
    const plain = makeApp({ authorizationServers: [as.issuer] });
    const token = await boundToken();
    const res = await request(plain.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('tools/list'));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    expect(res.headers['www-authenticate']).not.toContain('DPoP');
    expect(lastReason(plain.logs)).toBe('dpop_bound_token_as_bearer');
    // and the DPoP scheme stays an unsupported scheme there (400, as before)
    const dpop = await dpopCall(plain.app, token, await makeProof({ key: pk, token }));
    expect(dpop.status).toBe(400);
    await plain.rs.close();
  });

  it('RFC 9449 §7.2: unbound Bearer tokens still work where both schemes are accepted', async () => {
    const token = await signToken({ key: signing, issuer: as.issuer });
    const res = await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('tools/list'));
    expect(res.status).toBe(200);
    expect(res.body.auth.extra.scheme).toBe('Bearer');
    expect(res.body.auth.extra.jkt).toBeUndefined();
  });

  it('RFC 9449 §7.2 / RFC 9728 §2: with dpop.required, Bearer is refused and only the DPoP challenge is offered', async () => {
    const strict = makeApp({ authorizationServers: [as.issuer], dpop: { required: true } });
    const token = await signToken({ key: signing, issuer: as.issuer });
    const res = await request(strict.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('tools/list'));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^DPoP /);
    expect(res.headers['www-authenticate']).not.toContain('Bearer');
    expect(challenges(res.headers['www-authenticate'] as string).DPoP?.error).toBe('invalid_token');
    expect(lastReason(strict.logs)).toBe('dpop_required');
    const anonymous = await request(strict.app).post('/mcp').send(rpc('tools/list'));
    expect(anonymous.headers['www-authenticate']).toMatch(/^DPoP scope="notes:read", resource_metadata="[^"]+", algs="/);
    const bound = await boundToken();
    expect((await dpopCall(strict.app, bound, await makeProof({ key: pk, token: bound }))).status).toBe(200);
    await strict.rs.close();
  });

  it('RFC 9449 §7.1: a missing scope on a DPoP request is a 403 insufficient_scope on the DPoP challenge', async () => {
    const token = await boundToken();
    const res = await dpopCall(t.app, token, await makeProof({ key: pk, token }), rpc('tools/call', { name: 'add_note' }));
    expect(res.status).toBe(403);
    const c = challenges(res.headers['www-authenticate'] as string);
    expect(c.DPoP).toMatchObject({ error: 'insufficient_scope', scope: 'notes:read notes:write' });
    expect(c.Bearer?.error).toBeUndefined();
  });

  it('RFC 9449 §9: with nonces on, a proof without nonce gets 401 use_dpop_nonce and a DPoP-Nonce that then works', async () => {
    const n = makeApp({ authorizationServers: [as.issuer], dpop: { nonce: true } });
    const token = await boundToken();
    const first = await dpopCall(n.app, token, await makeProof({ key: pk, token }));
    expect(first.status).toBe(401);
    const c = challenges(first.headers['www-authenticate'] as string);
    expect(c.DPoP?.error).toBe('use_dpop_nonce');
    expect(first.body.error).toBe('use_dpop_nonce');
    const nonce = first.headers['dpop-nonce'] as string;
    expect(nonce).toMatch(/^[\x21\x23-\x5b\x5d-\x7e]{16,}$/);
    expect(lastReason(n.logs)).toBe('dpop_nonce_required');
    const second = await dpopCall(n.app, token, await makeProof({ key: pk, token, nonce }));
    expect(second.status).toBe(200);
    const wrong = await dpopCall(n.app, token, await makeProof({ key: pk, token, nonce: 'made-up-nonce' }));
    expect(wrong.status).toBe(401);
    expect(challenges(wrong.headers['www-authenticate'] as string).DPoP?.error).toBe('use_dpop_nonce');
    expect(wrong.headers['dpop-nonce']).toBe(nonce);
    expect(lastReason(n.logs)).toBe('dpop_nonce_invalid');
    await n.rs.close();
  });

  it('RFC 9449 §9: nonces from one instance are accepted by another with the same secret, expire, and are renewed', async () => {
    const secret = Buffer.alloc(32, 1).toString('base64url');
    let clock = Date.now();
    const now = () => clock;
    const a = makeApp({ authorizationServers: [as.issuer], now, dpop: { nonce: { secret, lifetimeSeconds: 120 } } });
    const b = makeApp({ authorizationServers: [as.issuer], now, dpop: { nonce: { secret, lifetimeSeconds: 120 } } });
    const c = makeApp({ authorizationServers: [as.issuer], now, dpop: { nonce: true } });
    const nonce = a.rs.core.dpopNonce()!;
    const token = await boundToken();
    const iat = () => Math.floor(clock / 1000);
    expect((await dpopCall(b.app, token, await makeProof({ key: pk, token, nonce, iat: iat() }))).status).toBe(200);
    expect((await dpopCall(c.app, token, await makeProof({ key: pk, token, nonce, iat: iat() }))).status).toBe(401);
    clock += 90_000; // still accepted, but a fresh nonce is handed out on success (RFC 9449 §8.2)
    const stale = await dpopCall(b.app, token, await makeProof({ key: pk, token, nonce, iat: iat() }));
    expect(stale.status).toBe(200);
    expect(stale.headers['dpop-nonce']).toBeDefined();
    expect(stale.headers['dpop-nonce']).not.toBe(nonce);
    clock += 120_000;
    const expired = await dpopCall(b.app, token, await makeProof({ key: pk, token, nonce, iat: iat() }));
    expect(expired.status).toBe(401);
    expect(lastReason(b.logs)).toBe('dpop_nonce_invalid');
    await Promise.all([a.rs.close(), b.rs.close(), c.rs.close()]);
  });

  it('RFC 9449 §6.2: an introspected DPoP token (token_type DPoP, cnf.jkt) is accepted with its proof only', async () => {
    const intro = makeApp({
      authorizationServers: [as.issuer],
      dpop: true,
      introspection: { endpoint: `${as.origin}/introspect`, clientId: 'rs', clientSecret: 'secret' },
    });
    const opaque = 'opaque-dpop-token-0123456789';
    as.introspectionResponses.set(opaque, {
      active: true,
      aud: RESOURCE,
      client_id: 'client-1',
      scope: 'notes:read',
      exp: Math.floor(Date.now() / 1000) + 300,
      token_type: 'DPoP',
      cnf: { jkt: pk.jkt },
    });
    expect((await dpopCall(intro.app, opaque, await makeProof({ key: pk, token: opaque }))).status).toBe(200);
    const asBearer = await request(intro.app).post('/mcp').set('Authorization', `Bearer ${opaque}`).send(rpc('tools/list'));
    expect(asBearer.status).toBe(401);
    expect(lastReason(intro.logs)).toBe('dpop_bound_token_as_bearer');
    await intro.rs.close();
  });

  it('a token with another confirmation method (mTLS x5t#S256) is refused: this server cannot check it', async () => {
    const token = await signToken({ key: signing, issuer: as.issuer, claims: { cnf: { 'x5t#S256': 'abc' } } });
    const res = await request(t.app).post('/mcp').set('Authorization', `Bearer ${token}`).send(rpc('tools/list'));
    expect(res.status).toBe(401);
    expect(lastReason()).toBe('sender_constraint_unsupported');
  });

  it('RFC 9449 §11.1: a custom (async) replay store shared by two instances refuses a proof replayed at the other instance', async () => {
    const seen = new Map<string, number>();
    const calls: Array<[string, number]> = [];
    const shared = {
      async add(key: string, expiresAt: number) {
        calls.push([key, expiresAt]);
        await new Promise((r) => setTimeout(r, 1));
        if ((seen.get(key) ?? 0) > Date.now()) return false;
        seen.set(key, expiresAt);
        return true;
      },
    };
    const one = makeApp({ authorizationServers: [as.issuer], dpop: { replay: shared } });
    const two = makeApp({ authorizationServers: [as.issuer], dpop: { replay: shared } });
    const token = await boundToken();
    const proof = await makeProof({ key: pk, token });
    expect((await dpopCall(one.app, token, proof)).status).toBe(200);
    await expectProofRefused(await dpopCall(two.app, token, proof), 'dpop_replayed', two.logs);
    // the entry outlives the proof's acceptance window (iat + maxAge + tolerance)
    const iat = JSON.parse(Buffer.from(proof.split('.')[1]!, 'base64url').toString()).iat as number;
    expect(calls[0]![1]).toBeGreaterThanOrEqual((iat + 60 + 5) * 1000);
    // the key names neither the token nor the proof
    expect(calls[0]![0]).not.toContain(token.slice(0, 20));
    await Promise.all([one.rs.close(), two.rs.close()]);
  });

  it('refusals never log the token or the proof', async () => {
    const token = await boundToken();
    const proof = await makeProof({ key: other, token });
    await dpopCall(t.app, token, proof);
    const logged = JSON.stringify(t.logs);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain(proof);
  });
});

describe('DPoP options', () => {
  it('refuses symmetric or unknown proof algorithms, bad nonce secrets and bad public URLs at creation', () => {
    const base = { authorizationServers: ['http://127.0.0.1:1'] };
    expect(() => makeApp({ ...base, dpop: { algorithms: ['HS256'] } })).toThrow(/asymmetric/);
    expect(() => makeApp({ ...base, dpop: { algorithms: ['none'] } })).toThrow(ConfigError);
    expect(() => makeApp({ ...base, dpop: { algorithms: [] } })).toThrow(/dpop\.algorithms must not be empty/);
    expect(() => makeApp({ ...base, dpop: { nonce: { secret: 'too-short' } } })).toThrow(/32 bytes/);
    expect(() => makeApp({ ...base, dpop: { publicUrl: 'ftp://x/mcp' } })).toThrow(/publicUrl/);
    expect(() => makeApp({ ...base, dpop: { maxAgeSeconds: 100_000 } })).toThrow(/dpop\.maxAgeSeconds must be a number between 0 and 600/);
  });
});
