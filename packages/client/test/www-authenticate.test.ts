import { describe, expect, it } from 'vitest';
import { bearerChallenge, parseWwwAuthenticate, ERR } from '../src/index.js';

// RFC 9110 §11.6.1 vectors: [header, expected challenges]
const VECTORS: Array<[string, ReturnType<typeof parseWwwAuthenticate>]> = [
  ['Bearer', [{ scheme: 'bearer', params: {} }]],
  ['Bearer realm="example"', [{ scheme: 'bearer', params: { realm: 'example' } }]],
  [
    'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"',
    [{ scheme: 'bearer', params: { resource_metadata: 'https://mcp.example.com/.well-known/oauth-protected-resource', scope: 'files:read' } }],
  ],
  ['BEARER Scope="a b"', [{ scheme: 'bearer', params: { scope: 'a b' } }]],
  ['Bearer error=invalid_token', [{ scheme: 'bearer', params: { error: 'invalid_token' } }]],
  ['Bearer realm = "spaces"  ,  scope = x', [{ scheme: 'bearer', params: { realm: 'spaces', scope: 'x' } }]],
  ['Bearer error_description="say \\"hi\\" \\\\ bye"', [{ scheme: 'bearer', params: { error_description: 'say "hi" \\ bye' } }]],
  ['Bearer error_description="a, b=c"', [{ scheme: 'bearer', params: { error_description: 'a, b=c' } }]],
  ['Basic YWxhZGRpbjpvcGVuc2VzYW1l', [{ scheme: 'basic', params: {}, token68: 'YWxhZGRpbjpvcGVuc2VzYW1l' }]],
  ['Negotiate abc==', [{ scheme: 'negotiate', params: {}, token68: 'abc==' }]],
  [
    'Basic realm="simple", Bearer scope="x", error="insufficient_scope"',
    [
      { scheme: 'basic', params: { realm: 'simple' } },
      { scheme: 'bearer', params: { scope: 'x', error: 'insufficient_scope' } },
    ],
  ],
  [
    'Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"',
    [
      { scheme: 'newauth', params: { realm: 'apps', type: '1', title: 'Login to "apps"' } },
      { scheme: 'basic', params: { realm: 'simple' } },
    ],
  ],
  ['Basic, Bearer', [{ scheme: 'basic', params: {} }, { scheme: 'bearer', params: {} }]],
  ['Negotiate abc=, Bearer scope="y"', [{ scheme: 'negotiate', params: {}, token68: 'abc=' }, { scheme: 'bearer', params: { scope: 'y' } }]],
  ['DPoP algs="ES256 PS256", Bearer', [{ scheme: 'dpop', params: { algs: 'ES256 PS256' } }, { scheme: 'bearer', params: {} }]],
  // Lenient: URL sent unquoted by some servers.
  ['Bearer resource_metadata=https://h.example/.well-known/x', [{ scheme: 'bearer', params: { resource_metadata: 'https://h.example/.well-known/x' } }]],
  ['', []],
];

const INVALID = ['Bearer realm="unterminated', 'Bearer scope="a", scope="b"', '=x', 'Bearer realm="x" junk', 'Bearer "quoted"', 'Bearer realm="a\\'];

describe('parseWwwAuthenticate (RFC 9110 §11.6.1)', () => {
  for (const [header, expected] of VECTORS) {
    it(`parses ${JSON.stringify(header)}`, () => {
      expect(parseWwwAuthenticate(header)).toEqual(expected);
    });
  }
  for (const header of INVALID) {
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
