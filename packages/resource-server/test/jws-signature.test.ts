/**
 * Issue 43: one path for the JWS signature of an access token, jose's `compactVerify` (RFC 7515
 * §5.2), whatever key the issuer's JWK set or a caller's `getKeys` hands out. These are the
 * properties the removed node:crypto fast path had its own tests for, checked on the one path.
 */
import { constants, createPrivateKey, generateKeyPairSync, KeyObject, sign, webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey } from 'jose';
import { DEFAULT_ALGORITHMS, verifyJwtAccessToken } from '../src/verify-jwt.js';
import { respeltSignature } from '@mcp-auth-kit/test-utils';
import { b64url, makeKey, RESOURCE, signToken } from './helpers/harness.js';

const ISSUER = 'https://as.example';
const options = (key: unknown) => ({ resource: RESOURCE, issuers: [ISSUER], getKeys: () => () => key as CryptoKey });

function flipByte(signature: string, at: number): string {
  const bytes = Buffer.from(signature, 'base64url');
  bytes[at]! ^= 0x01;
  return bytes.toString('base64url');
}

/** An access token's signing input (header and claims) for `alg`, to sign by hand. */
function signingInput(alg: string): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: ISSUER, sub: 'user-1', aud: RESOURCE, exp: now + 300, iat: now, jti: 'j', client_id: 'c' };
  return `${b64url({ alg, typ: 'at+jwt' })}.${b64url(claims)}`;
}

const refusedAs = (token: string, key: unknown, reason: string) =>
  expect(verifyJwtAccessToken(token, options(key))).rejects.toMatchObject({ reason });

describe('RFC 7515 §5.2 / RFC 7518 §3: every default algorithm on the one path', () => {
  it.each(DEFAULT_ALGORITHMS)('%s: the signature verifies; another input, a changed byte or a cut signature does not', async (alg) => {
    const key = await makeKey(alg);
    const cryptoKey = await importJWK(key.publicJwk, alg);
    const token = await signToken({ key, issuer: ISSUER });
    const [h, p, s] = token.split('.') as [string, string, string];
    await expect(verifyJwtAccessToken(token, options(cryptoKey))).resolves.toMatchObject({ subject: 'user-1' });
    await expect(verifyJwtAccessToken(token, options(key.publicJwk))).resolves.toMatchObject({ subject: 'user-1' });
    const other = (await signToken({ key, issuer: ISSUER, claims: { sub: 'user-2' } })).split('.')[1];
    await refusedAs(`${h}.${other}.${s}`, cryptoKey, 'signature_invalid');
    await refusedAs(`${h}.${p}.${flipByte(s, 3)}`, cryptoKey, 'signature_invalid');
    const cut = Buffer.from(s, 'base64url').subarray(0, -1).toString('base64url');
    await refusedAs(`${h}.${p}.${cut}`, cryptoKey, 'signature_invalid');
  });

  it('RFC 4648 §3.5: a non-canonical spelling of a valid signature is refused (one signature, one spelling)', async () => {
    const key = await makeKey('ES256');
    const token = await signToken({ key, issuer: ISSUER });
    for (const k of [await importJWK(key.publicJwk, 'ES256'), key.publicJwk])
      await refusedAs(respeltSignature(token), k, 'token_malformed');
  });

  it('RFC 7518 §3.4: an ECDSA signature must be R || S of the curve size, not DER and not padded', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const cryptoKey = await importJWK(publicKey.export({ format: 'jwk' }), 'ES256');
    const input = signingInput('ES256');
    const raw = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    const der = sign('sha256', Buffer.from(input), privateKey);
    await expect(verifyJwtAccessToken(`${input}.${raw.toString('base64url')}`, options(cryptoKey))).resolves.toMatchObject({});
    await refusedAs(`${input}.${der.toString('base64url')}`, cryptoKey, 'signature_invalid');
    await refusedAs(`${input}.${Buffer.concat([raw, Buffer.alloc(1)]).toString('base64url')}`, cryptoKey, 'signature_invalid');
  });

  it('RFC 7518 §3.5: PS256 requires a salt as long as the hash', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const cryptoKey = await importJWK(publicKey.export({ format: 'jwk' }), 'PS256');
    const input = signingInput('PS256');
    const withSalt = (saltLength: number) =>
      `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }).toString('base64url')}`;
    await expect(verifyJwtAccessToken(withSalt(32), options(cryptoKey))).resolves.toMatchObject({});
    await refusedAs(withSalt(0), cryptoKey, 'signature_invalid');
    await refusedAs(withSalt(20), cryptoKey, 'signature_invalid');
  });
});

describe('the key must be a public verification key of the token’s alg', () => {
  it('a key of another algorithm, curve or hash is refused, whatever the signature', async () => {
    const es384 = await generateKeyPair('ES384');
    const rs256 = await generateKeyPair('RS256', { modulusLength: 2048 });
    const token = await signToken({ key: await makeKey('ES256'), issuer: ISSUER });
    for (const [alg, key] of [
      ['ES256', es384.publicKey],
      ['PS256', rs256.publicKey],
      ['RS384', rs256.publicKey],
      ['EdDSA', es384.publicKey],
    ] as const) {
      const [, p, s] = token.split('.');
      await expect(verifyJwtAccessToken(`${b64url({ alg, typ: 'at+jwt' })}.${p}.${s}`, options(key))).rejects.toMatchObject({
        // the issuer's key set is at fault, not the token: a server error, never a verified token
        reason: 'internal_error',
        detail: { message: expect.stringMatching(/^CryptoKey does not support this operation/) },
      });
    }
  });

  it('a private key, a key without the verify usage and an RSA modulus under 2048 bits are refused', async () => {
    const key = await makeKey('ES256');
    const token = await signToken({ key, issuer: ISSUER });
    const noUsage = await webcrypto.subtle.importKey(
      'jwk',
      await exportJWK(await importJWK(key.publicJwk, 'ES256')),
      { name: 'ECDSA', namedCurve: 'P-256' },
      true,
      [],
    );
    await expect(verifyJwtAccessToken(token, options(key.privateKey))).rejects.toMatchObject({
      reason: 'internal_error',
      detail: { message: expect.stringContaining('must be of type "public"') },
    });
    await expect(verifyJwtAccessToken(token, options(noUsage))).rejects.toMatchObject({
      reason: 'internal_error',
      detail: { message: expect.stringContaining('usages must include verify') },
    });
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const smallPublic = await webcrypto.subtle.importKey(
      'jwk',
      small.publicKey.export({ format: 'jwk' }),
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    const input = signingInput('RS256');
    const signature = sign('sha256', Buffer.from(input), createPrivateKey(small.privateKey.export({ format: 'pem', type: 'pkcs8' })));
    await expect(verifyJwtAccessToken(`${input}.${signature.toString('base64url')}`, options(smallPublic))).rejects.toMatchObject({
      reason: 'internal_error',
      detail: { message: expect.stringContaining('2048 bits or larger') },
    });
  });

  it('RFC 7515 §4.1.11: any crit header is refused before the keys are asked (no extension is understood)', async () => {
    const key = await makeKey('ES256');
    let asked = 0;
    const getKeys = () => {
      asked++;
      return () => importJWK(key.publicJwk, 'ES256') as Promise<CryptoKey>;
    };
    const [, payload] = (await signToken({ key, issuer: ISSUER })).split('.');
    const input = `${b64url({ alg: 'ES256', kid: key.kid, typ: 'at+jwt', crit: ['exp'], exp: 1 })}.${payload}`;
    const signature = sign('sha256', Buffer.from(input), { key: KeyObject.from(key.privateKey), dsaEncoding: 'ieee-p1363' });
    await expect(
      verifyJwtAccessToken(`${input}.${signature.toString('base64url')}`, { resource: RESOURCE, issuers: [ISSUER], getKeys }),
    ).rejects.toMatchObject({ reason: 'token_malformed' });
    expect(asked).toBe(0);
  });
});
