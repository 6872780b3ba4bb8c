import { validateHeaderValue } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MALFORMED_WWW_AUTHENTICATE } from './helpers/www-authenticate.js';
import { buildChallenge, parseWwwAuthenticate, quoteValue, WwwAuthenticateParseError, type Challenge } from '../src/www-authenticate.js';

// RFC 9110 §11.6.1 vectors: [header, expected challenges]
const VECTORS: Array<[string, Challenge[]]> = [
  ['Bearer', [{ scheme: 'bearer', params: {} }]],
  ['Bearer realm="example"', [{ scheme: 'bearer', params: { realm: 'example' } }]],
  [
    'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"',
    [
      {
        scheme: 'bearer',
        params: { resource_metadata: 'https://mcp.example.com/.well-known/oauth-protected-resource', scope: 'files:read' },
      },
    ],
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
  [
    'Basic, Bearer',
    [
      { scheme: 'basic', params: {} },
      { scheme: 'bearer', params: {} },
    ],
  ],
  [
    'Negotiate abc=, Bearer scope="y"',
    [
      { scheme: 'negotiate', params: {}, token68: 'abc=' },
      { scheme: 'bearer', params: { scope: 'y' } },
    ],
  ],
  [
    'DPoP algs="ES256 PS256", Bearer',
    [
      { scheme: 'dpop', params: { algs: 'ES256 PS256' } },
      { scheme: 'bearer', params: {} },
    ],
  ],
  // Lenient: URL sent unquoted by some servers.
  [
    'Bearer resource_metadata=https://h.example/.well-known/x',
    [{ scheme: 'bearer', params: { resource_metadata: 'https://h.example/.well-known/x' } }],
  ],
  ['', []],
];

describe('parseWwwAuthenticate (RFC 9110 §11.6.1)', () => {
  for (const [header, expected] of VECTORS) {
    it(`parses ${JSON.stringify(header)}`, () => {
      expect(parseWwwAuthenticate(header)).toEqual(expected);
    });
  }
  for (const header of MALFORMED_WWW_AUTHENTICATE) {
    it(`rejects ${JSON.stringify(header)}`, () => {
      expect(() => parseWwwAuthenticate(header)).toThrowError(WwwAuthenticateParseError);
    });
  }
});

describe('buildChallenge()', () => {
  it('RFC 6750 §3.1: no credentials → no error and no error_description, only resource_metadata and scope', () => {
    const header = buildChallenge({
      resourceMetadata: 'http://localhost:3000/.well-known/oauth-protected-resource/mcp',
      scope: ['notes:read'],
      errorDescription: 'ignored without error',
    });
    expect(header).toBe('Bearer scope="notes:read", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp"');
    expect(header).not.toContain('error');
  });

  it('RFC 6750 §3: error, error_description, space-joined scope, resource_metadata', () => {
    const header = buildChallenge({
      error: 'insufficient_scope',
      errorDescription: 'needs write',
      scope: ['notes:read', 'notes:write'],
      resourceMetadata: 'https://mcp.example.com/.well-known/oauth-protected-resource',
      realm: 'mcp',
    });
    expect(parseWwwAuthenticate(header)).toEqual([
      {
        scheme: 'bearer',
        params: {
          realm: 'mcp',
          error: 'insufficient_scope',
          error_description: 'needs write',
          scope: 'notes:read notes:write',
          resource_metadata: 'https://mcp.example.com/.well-known/oauth-protected-resource',
        },
      },
    ]);
  });

  it('escapes backslash and double quote as quoted-pairs', () => {
    expect(quoteValue('a"b\\c')).toBe('"a\\"b\\\\c"');
    const header = buildChallenge({ error: 'invalid_token', errorDescription: 'say "hi" \\o/' });
    expect(parseWwwAuthenticate(header)[0]!.params.error_description).toBe('say "hi" \\o/');
  });

  it('drops scope values that are not RFC 6749 §3.3 scope-tokens', () => {
    expect(buildChallenge({ scope: ['ok', 'bad"q', 'with space', ''] })).toBe('Bearer scope="ok"');
  });

  it('replaces CR/LF and non-ASCII so the header cannot be split', () => {
    const header = buildChallenge({ error: 'invalid_token', errorDescription: 'a\r\nSet-Cookie: x=1\u00e9' });
    expect(header).not.toMatch(/[\r\n]/);
    expect(() => validateHeaderValue('www-authenticate', header)).not.toThrow();
  });

  it('property: any description/realm/metadata URL round-trips (after replacing non-printables) and is a valid header value', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string(), fc.string(), (description, realm, meta) => {
        const header = buildChallenge({
          error: 'invalid_token',
          errorDescription: description,
          realm,
          resourceMetadata: meta,
        });
        expect(() => validateHeaderValue('www-authenticate', header)).not.toThrow();
        const { params } = parseWwwAuthenticate(header)[0]!;
        const visible = (s: string) => s.replace(/[^\x20-\x7e]/g, '?');
        expect(params.error_description).toBe(visible(description));
        expect(params.realm).toBe(visible(realm));
        expect(params.resource_metadata).toBe(visible(meta));
        expect(params.error).toBe('invalid_token');
      }),
      { numRuns: 500 },
    );
  });

  it('property: printable ASCII values round-trip exactly', () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });
    fc.assert(
      fc.property(printable, (value) => {
        const header = buildChallenge({ error: 'invalid_request', errorDescription: value });
        expect(parseWwwAuthenticate(header)[0]!.params.error_description).toBe(value);
      }),
      { numRuns: 500 },
    );
  });

  it('property: scope-token lists round-trip as one space-separated value', () => {
    const scopeChar = fc
      .integer({ min: 0x21, max: 0x7e })
      .filter((c) => c !== 0x22 && c !== 0x5c)
      .map((c) => String.fromCharCode(c));
    const scopeToken = fc.string({ unit: scopeChar, minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(fc.array(scopeToken, { minLength: 1, maxLength: 5 }), (scopes) => {
        const header = buildChallenge({ error: 'insufficient_scope', scope: scopes });
        expect(parseWwwAuthenticate(header)[0]!.params.scope).toBe(scopes.join(' '));
      }),
      { numRuns: 300 },
    );
  });
});
