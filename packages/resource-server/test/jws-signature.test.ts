import { constants, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, sign, webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CompactSign, compactVerify, exportJWK, generateKeyPair, importJWK, type CryptoKey } from 'jose';
import { UnusableKeyError, verifyJwsSignature } from '../src/jws-signature.js';
import { DEFAULT_ALGORITHMS, verifyJwtAccessToken } from '../src/verify-jwt.js';
import { respeltSignature } from '@mcp-auth-kit/test-utils';
import { makeKey, RESOURCE, signToken } from './helpers/harness.js';

const ISSUER = 'https://as.example';

/** A compact JWS of `alg` signed by jose, split at its last dot. */
async function signed(alg: string, privateKey: CryptoKey | Parameters<CompactSign['sign']>[0], payload = '{"sub":"zoë"}') {
  const jws = await new CompactSign(new TextEncoder().encode(payload)).setProtectedHeader({ alg }).sign(privateKey);
  const dot = jws.lastIndexOf('.');
  return { input: jws.slice(0, dot), signature: jws.slice(dot + 1) };
}

function flipByte(signature: string, at: number): string {
  const bytes = Buffer.from(signature, 'base64url');
  bytes[at]! ^= 0x01;
  return bytes.toString('base64url');
}

describe('RFC 7515 §5.2 / RFC 7518 §3: verifyJwsSignature on node:crypto, every default algorithm', () => {
  it.each(DEFAULT_ALGORITHMS)(
    '%s: the signature verifies; another input, a changed byte or a truncated signature does not',
    async (alg) => {
      const { privateKey, publicKey } = await generateKeyPair(alg, { modulusLength: 2048 });
      const { input, signature } = await signed(alg, privateKey);
      await expect(verifyJwsSignature(alg, publicKey, input, signature)).resolves.toBe(true);
      await expect(verifyJwsSignature(alg, publicKey, `${input}A`, signature)).resolves.toBe(false);
      await expect(verifyJwsSignature(alg, publicKey, input, flipByte(signature, 3))).resolves.toBe(false);
      const bytes = Buffer.from(signature, 'base64url');
      await expect(verifyJwsSignature(alg, publicKey, input, bytes.subarray(0, -1).toString('base64url'))).resolves.toBe(false);
      await expect(verifyJwsSignature(alg, publicKey, input, '')).resolves.toBe(false);
    },
  );

  it('RFC 4648 §3.5: a non-canonical spelling of a valid signature is refused (one signature, one spelling)', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const { input, signature } = await signed('ES256', privateKey);
    // 64 bytes in 86 characters: the last one carries 4 unused bits
    expect(signature.length).toBe(86);
    const other = respeltSignature(`${input}.${signature}`).slice(input.length + 1);
    expect(Buffer.from(other, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    await expect(verifyJwsSignature('ES256', publicKey, input, other)).resolves.toBe(false);
  });

  it('RFC 7518 §3.4: an ECDSA signature must be R || S of the curve size, not DER and not padded', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const cryptoKey = await importJWK(publicKey.export({ format: 'jwk' }), 'ES256');
    const input = `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}`;
    const raw = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    const der = sign('sha256', Buffer.from(input), privateKey);
    await expect(verifyJwsSignature('ES256', cryptoKey as CryptoKey, input, raw.toString('base64url'))).resolves.toBe(true);
    await expect(verifyJwsSignature('ES256', cryptoKey as CryptoKey, input, der.toString('base64url'))).resolves.toBe(false);
    const padded = Buffer.concat([raw, Buffer.alloc(1)]).toString('base64url');
    await expect(verifyJwsSignature('ES256', cryptoKey as CryptoKey, input, padded)).resolves.toBe(false);
  });

  it('RFC 7518 §3.5: PS256 requires a salt as long as the hash (OpenSSL would recover any length on its own)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const cryptoKey = (await importJWK(publicKey.export({ format: 'jwk' }), 'PS256')) as CryptoKey;
    const input = `${Buffer.from('{"alg":"PS256"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}`;
    const withSalt = (saltLength: number) =>
      sign('sha256', Buffer.from(input), { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }).toString('base64url');
    await expect(verifyJwsSignature('PS256', cryptoKey, input, withSalt(32))).resolves.toBe(true);
    await expect(verifyJwsSignature('PS256', cryptoKey, input, withSalt(0))).resolves.toBe(false);
    await expect(verifyJwsSignature('PS256', cryptoKey, input, withSalt(20))).resolves.toBe(false);
  });
});

describe('the key must be a public verification key of the token’s alg (as jose checks a CryptoKey)', () => {
  it('a key of another algorithm, curve or hash is refused, whatever the signature', async () => {
    const es384 = await generateKeyPair('ES384');
    const rs256 = await generateKeyPair('RS256', { modulusLength: 2048 });
    const { input, signature } = await signed('ES256', (await generateKeyPair('ES256')).privateKey);
    for (const [alg, key] of [
      ['ES256', es384.publicKey],
      ['PS256', rs256.publicKey],
      ['RS384', rs256.publicKey],
      ['EdDSA', es384.publicKey],
    ] as const) {
      await expect(verifyJwsSignature(alg, key, input, signature)).rejects.toBeInstanceOf(UnusableKeyError);
    }
  });

  it('a private key, a key without the verify usage, an RSA modulus under 2048 bits and an unknown alg are refused', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const { input, signature } = await signed('ES256', privateKey);
    await expect(verifyJwsSignature('ES256', privateKey, input, signature)).rejects.toBeInstanceOf(UnusableKeyError);
    const noUsage = await webcrypto.subtle.importKey('jwk', await exportJWK(publicKey), { name: 'ECDSA', namedCurve: 'P-256' }, true, []);
    await expect(verifyJwsSignature('ES256', noUsage as CryptoKey, input, signature)).rejects.toBeInstanceOf(UnusableKeyError);
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const smallPublic = await webcrypto.subtle.importKey(
      'jwk',
      small.publicKey.export({ format: 'jwk' }),
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    const rsInput = `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.e30`;
    const rsSignature = sign('sha256', Buffer.from(rsInput), createPrivateKey(small.privateKey.export({ format: 'pem', type: 'pkcs8' })));
    await expect(verifyJwsSignature('RS256', smallPublic as CryptoKey, rsInput, rsSignature.toString('base64url'))).rejects.toThrow(
      /2048 bits/,
    );
    await expect(verifyJwsSignature('HS256', publicKey, input, signature)).rejects.toBeInstanceOf(UnusableKeyError);
  });
});

describe('verifyJwtAccessToken: one path for every key (a CryptoKey, a JWK, a KeyObject), with the same answers', () => {
  it('RFC 9068 §4: a token verifies with the key as a CryptoKey and as a JWK; a respelt signature is refused by both paths', async () => {
    const key = await makeKey('ES256');
    const token = await signToken({ key, issuer: ISSUER });
    const cryptoKey = await importJWK(key.publicJwk, 'ES256');
    const options = (k: unknown) => ({ resource: RESOURCE, issuers: [ISSUER], getKeys: () => () => k as CryptoKey });
    await expect(verifyJwtAccessToken(token, options(cryptoKey))).resolves.toMatchObject({ subject: 'user-1' });
    await expect(verifyJwtAccessToken(token, options(key.publicJwk))).resolves.toMatchObject({ subject: 'user-1' });
    const [h, p, s] = token.split('.') as [string, string, string];
    // jose's decoder ignores the unused bits: refused on the token's text, before either path
    for (const k of [cryptoKey, key.publicJwk]) {
      await expect(verifyJwtAccessToken(respeltSignature(token), options(k))).rejects.toMatchObject({ reason: 'token_malformed' });
    }
    await expect(verifyJwtAccessToken(`${h}.${p}.${flipByte(s, 10)}`, options(cryptoKey))).rejects.toMatchObject({
      reason: 'signature_invalid',
    });
    await expect(verifyJwtAccessToken(`${h}.${p}.${flipByte(s, 10)}`, options(key.publicJwk))).rejects.toMatchObject({
      reason: 'signature_invalid',
    });
  });

  it('RFC 7515 §4.1.11: any crit header is refused before the keys are asked (no extension is understood)', async () => {
    const key = await makeKey('ES256');
    let asked = 0;
    const getKeys = () => {
      asked++;
      return () => importJWK(key.publicJwk, 'ES256') as Promise<CryptoKey>;
    };
    // jose refuses to sign it: signed by hand, with a valid signature
    const [, payload] = (await signToken({ key, issuer: ISSUER })).split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: key.kid, typ: 'at+jwt', crit: ['exp'], exp: 1 })).toString('base64url');
    const input = `${header}.${payload}`;
    const signature = sign('sha256', Buffer.from(input), { key: KeyObject.from(key.privateKey), dsaEncoding: 'ieee-p1363' });
    const token = `${input}.${signature.toString('base64url')}`;
    await expect(verifyJwtAccessToken(token, { resource: RESOURCE, issuers: [ISSUER], getKeys })).rejects.toMatchObject({
      reason: 'token_malformed',
    });
    expect(asked).toBe(0);
  });
});

/** RFC 7515 Appendix A.3 (ES256) and RFC 8037 Appendix A.4 (Ed25519): the published examples. */
const VECTORS = [
  {
    name: 'RFC 7515 A.3 ES256',
    alg: 'ES256',
    jwk: {
      kty: 'EC',
      crv: 'P-256',
      x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
      y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
    },
    jws: 'eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q',
  },
  {
    name: 'RFC 8037 A.4 Ed25519',
    alg: 'EdDSA',
    jwk: { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' },
    jws: 'eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg',
  },
] as const;

describe('the published examples, and the same answer as jose on every change of them', () => {
  it.each(VECTORS)(
    '$name: verifies as a CryptoKey, a JWK and a KeyObject; every one-byte change is refused, as jose refuses it',
    async ({ alg, jwk, jws }) => {
      const dot = jws.lastIndexOf('.');
      const input = jws.slice(0, dot);
      const signature = jws.slice(dot + 1);
      const cryptoKey = (await importJWK(jwk, alg)) as CryptoKey;
      for (const key of [cryptoKey, jwk, createPublicKey({ key: jwk, format: 'jwk' })]) {
        await expect(verifyJwsSignature(alg, key, input, signature)).resolves.toBe(true);
      }
      await expect(compactVerify(jws, cryptoKey)).resolves.toBeDefined();
      const bytes = Buffer.from(signature, 'base64url').length;
      for (let at = 0; at < bytes; at += 7) {
        const changed = flipByte(signature, at);
        const joseAnswer = await compactVerify(`${input}.${changed}`, cryptoKey).then(
          () => true,
          () => false,
        );
        expect(joseAnswer).toBe(false);
        await expect(verifyJwsSignature(alg, cryptoKey, input, changed)).resolves.toBe(joseAnswer);
      }
      await expect(verifyJwsSignature(alg, cryptoKey, `${input}A`, signature)).resolves.toBe(false);
    },
  );

  it('a secret, a private JWK or a JWK of another type is never a verification key', async () => {
    const [{ jwk, jws }] = VECTORS;
    const dot = jws.lastIndexOf('.');
    const [input, signature] = [jws.slice(0, dot), jws.slice(dot + 1)];
    const refused = (key: unknown, alg = 'ES256') =>
      expect(verifyJwsSignature(alg, key, input, signature)).rejects.toBeInstanceOf(UnusableKeyError);
    await refused(new TextEncoder().encode('a shared secret of thirty-two by'));
    await refused({ kty: 'oct', k: 'c2VjcmV0' });
    await refused({ ...jwk, d: 'jpsQnnGQmL-YBIffH1136cLbG3Hqy9Z7Bxf2mdmLVdU' });
    await refused(VECTORS[1].jwk);
    await refused(jwk, 'HS256');
  });
});
