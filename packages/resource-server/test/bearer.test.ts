import { describe, expect, it } from 'vitest';
import { extractBearerToken, MAX_TOKEN_LENGTH, ResourceServerError } from '../src/core.js';

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof ResourceServerError ? `${err.status} ${err.error ?? '-'} ${err.reason}` : String(err);
  }
  return undefined;
}

describe('extractBearerToken() (RFC 6750 §2.1, MCP §Access Token Usage)', () => {
  it.each([
    ['Bearer abc.def-ghi_jkl~mno+p/q==', 'abc.def-ghi_jkl~mno+p/q=='],
    ['bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['Bearer   abc', 'abc'],
  ])('accepts %j', (header, token) => {
    expect(extractBearerToken({ authorization: header })).toBe(token);
  });

  it.each([
    ['Bearer', '400 invalid_request malformed_authorization_header'],
    ['Bearer ', '400 invalid_request malformed_authorization_header'],
    ['Bearer  a b', '400 invalid_request malformed_authorization_header'],
    ['Bearer a=b', '400 invalid_request malformed_authorization_header'],
    ['Bearer "abc"', '400 invalid_request malformed_authorization_header'],
    ['Bearerabc', '400 invalid_request unsupported_authorization_scheme'],
    ['Basic dXNlcjpwYXNz', '400 invalid_request unsupported_authorization_scheme'],
    ['DPoP abc', '400 invalid_request unsupported_authorization_scheme'],
    ['', '400 invalid_request malformed_authorization_header'],
  ])('refuses %j', (header, expected) => {
    expect(reasonOf(() => extractBearerToken({ authorization: header }))).toBe(expected);
  });

  it('RFC 6750 §3.1: no Authorization header → 401 without error code', () => {
    expect(reasonOf(() => extractBearerToken({ authorization: undefined }))).toBe('401 - missing_credentials');
  });

  it('MCP §Token Requirements: access_token in the query string → 400 invalid_request, even with a header', () => {
    expect(reasonOf(() => extractBearerToken({ authorization: 'Bearer abc', url: '/mcp?access_token=abc' }))).toBe(
      '400 invalid_request token_in_query',
    );
    expect(reasonOf(() => extractBearerToken({ authorization: undefined, url: '/mcp?x=1&access_token=' }))).toBe(
      '400 invalid_request token_in_query',
    );
    expect(extractBearerToken({ authorization: 'Bearer abc', url: '/mcp?not_access_token=1' })).toBe('abc');
  });

  it('RFC 6750 §2.2 form-body token → 400 invalid_request', () => {
    expect(reasonOf(() => extractBearerToken({ authorization: 'Bearer abc', tokenInBody: true }))).toBe(
      '400 invalid_request token_in_body',
    );
  });

  it('refuses oversized tokens without work (401 invalid_token)', () => {
    expect(reasonOf(() => extractBearerToken({ authorization: `Bearer ${'a'.repeat(MAX_TOKEN_LENGTH + 1)}` }))).toBe(
      '401 invalid_token token_too_large',
    );
  });
});
