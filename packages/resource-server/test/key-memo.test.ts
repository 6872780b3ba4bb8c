/**
 * The key memo (src/key-memo.ts) hands jwtVerify the key jose's remote JWK set already chose for
 * an alg + kid. It must never outlive what the JWKS host publishes: after a rotation a token of
 * the removed key is refused and the new key is accepted; a stale set is not served from it.
 * A real JWKS host on loopback; keys and tokens made with jose.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createMemoizedRemoteKeySet, type MemoizedKeySet } from '../src/key-memo.js';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function newKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

function sign(key: SigningKey): Promise<string> {
  return new SignJWT({ sub: 'alice' })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
    .setIssuer('https://as.example')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key.privateKey);
}

function header(token: string): { alg?: unknown; kid?: unknown } {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg?: unknown; kid?: unknown };
}

/** What verify-jwt.ts does: the memo's key when it has one, else the remote set. */
async function verify(set: MemoizedKeySet, token: string) {
  const known = set.cached(header(token));
  return known !== undefined
    ? jwtVerify(token, known, { issuer: 'https://as.example' })
    : jwtVerify(token, set, { issuer: 'https://as.example' });
}

/**
 * The call that fetched the JWKS does not memoize (a fetch ran meanwhile); the next one, made
 * from the settled set, does.
 */
async function warm(set: MemoizedKeySet, token: string): Promise<void> {
  await verify(set, token);
  expect(set.cached(header(token))).toBeUndefined();
  await verify(set, token);
  expect(set.cached(header(token))).toBeDefined();
}

describe('key memo (JWKS rotation and staleness)', () => {
  let server: Server;
  let jwksUrl: URL;
  let published: SigningKey[] = [];
  let fetches = 0;
  let k1: SigningKey;
  let k2: SigningKey;

  beforeAll(async () => {
    [k1, k2] = await Promise.all([newKey('k1'), newKey('k2')]);
    server = createServer((req, res) => {
      if (req.url !== '/jwks') {
        res.statusCode = 404;
        res.end();
        return;
      }
      fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: published.map((k) => k.jwk) }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    published = [k1];
    fetches = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const open = (cacheMaxAge = 600_000) =>
    createMemoizedRemoteKeySet(jwksUrl, { cooldownDuration: 0, cacheMaxAge, timeoutDuration: 5000, fetch });

  it('a warm set serves the chosen key from the memo without refetching', async () => {
    const set = open();
    const t1 = await sign(k1);
    expect(set.cached(header(t1))).toBeUndefined();
    await warm(set, t1);
    expect(fetches).toBe(1);
    expect((await verify(set, t1)).payload.sub).toBe('alice');
    expect(fetches).toBe(1);
    // Only the alg + kid pair that was chosen: another alg with the same kid is not served.
    expect(set.cached({ alg: 'RS256', kid: 'k1' })).toBeUndefined();
  });

  it('RFC 7517 key rotation: after the host drops k1 for k2, k2 is accepted and a k1 token is refused', async () => {
    const set = open();
    const t1 = await sign(k1);
    await warm(set, t1);

    published = [k2];
    const t2 = await sign(k2);
    // Unknown kid → the set refetches; the fetch forgets everything the old JWKS gave.
    expect((await verify(set, t2)).protectedHeader.kid).toBe('k2');
    expect(fetches).toBe(2);
    expect(set.cached(header(t1))).toBeUndefined();
    await expect(verify(set, t1)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    // And the new key is what the memo serves once the set has settled on the new JWKS.
    await verify(set, t2);
    expect(set.cached(header(t2))).toBeDefined();
  });

  it('a stale set (older than cacheMaxAge) is not served from the memo: the removed key is refused after the refetch', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const set = open(60_000);
    const t1 = await sign(k1);
    await warm(set, t1);

    // The host rotates; nothing has told this set yet.
    published = [k2];
    vi.setSystemTime(Date.now() + 61_000);
    expect(set.cached(header(t1))).toBeUndefined();
    await expect(verify(set, t1)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    // It went back to the host (and, cooldown 0, once more for the unknown kid).
    expect(fetches).toBeGreaterThanOrEqual(2);
    expect(set.cached(header(t1))).toBeUndefined();
  });

  it('a forged token naming a memoized kid is still refused (the memo selects, jwtVerify verifies)', async () => {
    const set = open();
    const t1 = await sign(k1);
    await warm(set, t1);
    const impostor = { ...k2, kid: 'k1' };
    const forged = await sign(impostor);
    expect(set.cached(header(forged))).toBeDefined();
    await expect(verify(set, forged)).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });
});
