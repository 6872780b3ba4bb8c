import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildChallenge, quoteValue } from '../src/index.js';
import { parseChallenge } from './_helpers.js';

describe('buildChallenge()', () => {
  it('RFC 6750 §3.1: no credentials → no error and no error_description, only resource_metadata and scope', () => {
    const header = buildChallenge({
      resourceMetadata: 'http://localhost:3000/.well-known/oauth-protected-resource/mcp',
      scope: ['notes:read'],
      errorDescription: 'ignored without error',
    });
    expect(header).toBe(
      'Bearer scope="notes:read", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp"',
    );
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
    expect(parseChallenge(header)).toEqual({
      scheme: 'Bearer',
      params: {
        realm: 'mcp',
        error: 'insufficient_scope',
        error_description: 'needs write',
        scope: 'notes:read notes:write',
        resource_metadata: 'https://mcp.example.com/.well-known/oauth-protected-resource',
      },
    });
  });

  it('escapes backslash and double quote as quoted-pairs', () => {
    expect(quoteValue('a"b\\c')).toBe('"a\\"b\\\\c"');
    const header = buildChallenge({ error: 'invalid_token', errorDescription: 'say "hi" \\o/' });
    expect(parseChallenge(header).params.error_description).toBe('say "hi" \\o/');
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
        const { params } = parseChallenge(header);
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
        expect(parseChallenge(header).params.error_description).toBe(value);
      }),
      { numRuns: 500 },
    );
  });

  it('property: scope-token lists round-trip as one space-separated value', () => {
    const scopeChar = fc.integer({ min: 0x21, max: 0x7e }).filter((c) => c !== 0x22 && c !== 0x5c).map((c) => String.fromCharCode(c));
    const scopeToken = fc.string({ unit: scopeChar, minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(fc.array(scopeToken, { minLength: 1, maxLength: 5 }), (scopes) => {
        const header = buildChallenge({ error: 'insufficient_scope', scope: scopes });
        expect(parseChallenge(header).params.scope).toBe(scopes.join(' '));
      }),
      { numRuns: 300 },
    );
  });
});
