import { describe, expect, it } from 'vitest';
import { JWS_COMPACT } from '../src/jws.js';

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
