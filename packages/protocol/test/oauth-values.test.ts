import { describe, expect, it } from 'vitest';
import * as oauth from '../src/oauth-values.js';

describe('issuer identifiers in canonical form (RFC 8414 §2, §3.3)', () => {
  it.each([
    'https://as.example',
    'https://as.example/',
    'https://as.example/tenant/one',
    'http://127.0.0.1:4000',
    'http://localhost:4000/oidc',
  ])('%s is accepted', (issuer) => expect(oauth.issuerProblem(issuer)).toBeUndefined());

  it.each([
    ['TAB in the path (dropped by the URL parser)', 'https://as.example/\tx'],
    ['LF in the host', 'https://as.\nexample'],
    ['CR', 'https://as.example/x\r'],
    ['trailing space', 'https://as.example/ '],
    ['leading C0', '\u0000https://as.example'],
    ['ZWSP', 'https://as.example/\u200bx'],
    ['upper-case host', 'https://AS.example'],
    ['default port spelt out', 'https://as.example:443/'],
    ['dot segments', 'https://as.example/a/../b'],
    ['raw non-ASCII path', 'https://as.example/é'],
    ['query', 'https://as.example/?a=1'],
    ['empty query', 'https://as.example/?'],
    ['fragment', 'https://as.example/#x'],
    ['user information', 'https://u:p@as.example/'],
    ['another scheme', 'ftp://as.example/'],
    ['not a URL', 'as.example'],
    ['too long', `https://as.example/${'a'.repeat(2100)}`],
    ['not a string', 42],
  ])('%s is refused', (_why, issuer) => {
    expect(oauth.issuerProblem(issuer)).toEqual(expect.any(String));
    expect(oauth.isCanonicalIssuer(issuer)).toBe(false);
  });
});

describe('AS error codes (RFC 6749 §5.2 charset %x20-21 / %x23-5B / %x5D-7E)', () => {
  it('registered and extension codes are kept', () => {
    for (const code of ['invalid_grant', 'access_denied', 'use_dpop_nonce', 'x-vendor.error'])
      expect(oauth.oauthErrorCode(code)).toBe(code);
  });

  it.each([
    ['newline (forged lines)', 'invalid_grant\nLogged in to https://bank.example'],
    ['ESC sequence', 'x\u001b[2J'],
    ['double quote', 'a"b'],
    ['backslash', 'a\\b'],
    ['non-ASCII', 'erreur_é'],
    ['ZWSP', 'invalid\u200bgrant'],
    ['empty', ''],
    ['too long', 'a'.repeat(101)],
    ['not a string', { error: 'x' }],
  ])('%s is replaced by the placeholder', (_why, code) => expect(oauth.oauthErrorCode(code)).toBe(oauth.MALFORMED_ERROR_CODE));

  it('the placeholder is itself in the charset, and descriptions are cut', () => {
    expect(oauth.oauthErrorCode(oauth.MALFORMED_ERROR_CODE)).toBe(oauth.MALFORMED_ERROR_CODE);
    expect(oauth.oauthErrorDescription('a'.repeat(400))).toHaveLength(301);
    expect(oauth.oauthErrorDescription(7)).toBeUndefined();
  });
});

describe('access token syntax (RFC 6750 §2.1 b64token)', () => {
  it('accepts JWTs and opaque tokens, refuses CR/LF and spaces', () => {
    expect(oauth.isAccessTokenSyntax('eyJhbGciOi.eyJzdWIi.sig-_~+/==')).toBe(true);
    for (const bad of ['abc\r\nX-Injected: 1', 'a b', '', 'a=b', 'tok\u200b']) expect(oauth.isAccessTokenSyntax(bad)).toBe(false);
  });
});

describe('token lifetimes (RFC 6749 §5.1 expires_in) in range', () => {
  it('whole seconds, capped at one year; not a finite non-negative number: none said', () => {
    expect(oauth.tokenLifetime(3600)).toBe(3600);
    expect(oauth.tokenLifetime(59.9)).toBe(59);
    expect(oauth.tokenLifetime(0)).toBe(0);
    expect(oauth.tokenLifetime(1e300)).toBe(oauth.MAX_TOKEN_LIFETIME_SECONDS);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '3600', undefined]) expect(oauth.tokenLifetime(bad)).toBeUndefined();
  });
});
