import { describe, expect, it } from 'vitest';
import { MALFORMED_WWW_AUTHENTICATE } from '../../protocol/test/helpers/www-authenticate.js';
import { bearerChallenge, parseWwwAuthenticate } from '../src/core.js';
import { ERR } from '../src/index.js';

describe('parseWwwAuthenticate of the client (the shared RFC 9110 parser with a coded error)', () => {
  it('parses through the shared parser', () => {
    expect(parseWwwAuthenticate('Bearer scope="a b", resource_metadata="https://h.example/x"')).toEqual([
      { scheme: 'bearer', params: { scope: 'a b', resource_metadata: 'https://h.example/x' } },
    ]);
  });
  for (const header of MALFORMED_WWW_AUTHENTICATE) {
    it(`rejects ${JSON.stringify(header)} with a coded error`, () => {
      expect(() => parseWwwAuthenticate(header)).toThrowError(expect.objectContaining({ code: ERR.WWW_AUTHENTICATE_PARSE }));
    });
  }
  it('bearerChallenge picks the Bearer challenge of a Response among several', () => {
    const res = new Response(null, { status: 401, headers: { 'www-authenticate': 'Basic realm="r", Bearer scope="s"' } });
    expect(bearerChallenge(res)?.params.scope).toBe('s');
  });
  it('bearerChallenge yields undefined for a malformed header instead of throwing', () => {
    const res = new Response(null, { status: 401, headers: { 'www-authenticate': 'Bearer realm="x' } });
    expect(bearerChallenge(res)).toBeUndefined();
  });
});
