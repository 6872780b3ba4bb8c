import { describe, expect, it } from 'vitest';
import { isCanonicalBase64url, isCanonicalCompactJws, isCanonicalSignedJws, JWS_COMPACT } from '../src/jws.js';

describe('RFC 7515 §7.1 / §2: JWS_COMPACT, the compact serialization in unpadded base64url', () => {
  const header = Buffer.from('{"alg":"ES256"}').toString('base64url');
  const payload = Buffer.from('{"iss":"https://as.example"}').toString('base64url');
  const signature = 'MEUCIQDx_-Yz0a9';

  it.each([
    ['a signed JWS', `${header}.${payload}.${signature}`],
    ['an unsecured JWS (empty signature, RFC 7519 §6)', `${header}.${payload}.`],
  ])('accepts %s', (_, value) => expect(JWS_COMPACT.test(value)).toBe(true));

  it.each([
    ['whitespace inside the signature', `${header}.${payload}.${signature.slice(0, 4)} ${signature.slice(4)}`],
    ['a line break inside the payload', `${header}.${payload.slice(0, 5)}\n${payload.slice(5)}`],
    ['padding', `${header}.${payload}=.${signature}`],
    ['the base64 alphabet (+ and /)', `${header}.${payload}.${signature}+/`],
    ['an empty header', `.${payload}.${signature}`],
    ['an empty payload', `${header}..${signature}`],
    ['two segments', `${header}.${payload}`],
    ['five segments (a JWE)', `${header}.a.b.c.d`],
    ['a trailing line break', `${header}.${payload}.${signature}\n`],
    ['nothing', ''],
  ])('refuses %s', (_, value) => expect(JWS_COMPACT.test(value)).toBe(false));
});

describe('RFC 4648 §3.5: isCanonicalBase64url, one spelling per byte string', () => {
  it('accepts what Node encodes, at every length', () => {
    for (let n = 0; n <= 66; n++) {
      const bytes = Buffer.alloc(n, 0xff);
      for (let i = 0; i < n; i++) bytes[i] = (i * 151 + n) & 0xff;
      expect(isCanonicalBase64url(bytes.toString('base64url'))).toBe(true);
    }
  });

  it('refuses a spelling with unused bits set, though it decodes to the same bytes (signature malleability)', () => {
    // 64 bytes (an ES256 signature) take 86 characters, whose last carries 4 unused bits
    const signature = Buffer.alloc(64, 7).toString('base64url');
    const respelt = signature.slice(0, -1) + String.fromCharCode(signature.charCodeAt(85) + 1);
    expect(Buffer.from(respelt, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    expect(isCanonicalBase64url(respelt)).toBe(false);
    // 2 bytes take 3 characters, the last with 2 unused bits
    expect(isCanonicalBase64url('AAB')).toBe(false);
    expect(isCanonicalBase64url('AAE')).toBe(true);
  });

  it.each([
    ['an impossible length (4n + 1)', 'AAAAA'],
    ['padding', 'AA=='],
    ['the base64 alphabet', 'ab+/'],
    ['whitespace', 'AA AA'],
  ])('refuses %s', (_, value) => expect(isCanonicalBase64url(value)).toBe(false));
});

describe('isCanonicalSignedJws: a JWS that must be signed, in its one spelling (RFC 9449 §4.2 proofs)', () => {
  const header = Buffer.from('{"alg":"ES256","typ":"dpop+jwt"}').toString('base64url');
  const payload = Buffer.from('{"jti":"1"}').toString('base64url');
  const signature = Buffer.alloc(64, 9).toString('base64url');
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

  it('accepts a signed JWS', () => expect(isCanonicalSignedJws(`${header}.${payload}.${signature}`)).toBe(true));

  it('isCanonicalCompactJws: the same spelling rule, an empty signature allowed (an unsecured JWS is reported as such)', () => {
    expect(isCanonicalCompactJws(`${header}.${payload}.${signature}`)).toBe(true);
    expect(isCanonicalCompactJws(`${header}.${payload}.`)).toBe(true);
    expect(isCanonicalCompactJws(`${header}.${payload}.${signature.slice(0, -1)}${A[A.indexOf(signature.at(-1)!) | 1]}`)).toBe(false);
    expect(isCanonicalCompactJws(`${header}.${payload}.${signature.slice(0, 9)} ${signature.slice(9)}`)).toBe(false);
  });

  it.each([
    ['an empty signature', `${header}.${payload}.`],
    ['a respelt signature', `${header}.${payload}.${signature.slice(0, -1)}${A[A.indexOf(signature.at(-1)!) | 1]}`],
    ['whitespace inside the signature', `${header}.${payload}.${signature.slice(0, 9)} ${signature.slice(9)}`],
    ['two proofs joined (a repeated header)', `${header}.${payload}.${signature}, ${header}.${payload}.${signature}`],
  ])('refuses %s', (_, value) => expect(isCanonicalSignedJws(value)).toBe(false));
});
