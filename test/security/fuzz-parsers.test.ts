import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { McpAuthError } from '@mcp-auth-kit/client';
import { parseWwwAuthenticate } from '@mcp-auth-kit/client/core';
import { buildChallenge, canonicalResource } from '@mcp-auth-kit/protocol';
import {
  ResourceServerError,
  audienceIncludes,
  checkOrigin,
  extractBearerToken,
  normalizeOrigin,
} from '@mcp-auth-kit/resource-server/core';

/**
 * In-process fuzzing of the header parsers and builders (cheap: tens of thousands of inputs).
 * Properties: no unexpected exception type, no hang, and builder output always parses back.
 * Seeds are fixed so that CI runs are reproducible; FUZZ_SEED overrides.
 */
const seed = Number(process.env.FUZZ_SEED ?? 20261202);
const RUNS = 12_000;

const TOKEN_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=';
const nasty = fc.constantFrom(
  '',
  ' ',
  '\t',
  ',',
  '"',
  '\\',
  '=',
  '==',
  '"\\',
  ',,,',
  '\r\n',
  '\u0000',
  '\u00ff',
  '\u2028',
  '😀',
  'Bearer',
  'bearer',
  'DPoP',
  'Basic',
  'realm',
  'error',
  'scope',
  'resource_metadata',
  'a=b',
  'a="b',
  'a="b\\"c"',
);
const headerish = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.oneof(nasty, fc.string({ maxLength: 12 })), { maxLength: 20 }).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 200 }) },
);

describe('fuzz: client WWW-Authenticate parser (RFC 9110 §11.6.1)', () => {
  it(`${RUNS} malformed headers: returns challenges or throws McpAuthError(WWW_AUTHENTICATE_PARSE), nothing else`, () => {
    fc.assert(
      fc.property(headerish, (header) => {
        try {
          const challenges = parseWwwAuthenticate(header);
          expect(Array.isArray(challenges)).toBe(true);
          for (const c of challenges) {
            expect(c.scheme).toBe(c.scheme.toLowerCase());
            expect(typeof c.params).toBe('object');
          }
        } catch (error) {
          expect(error).toBeInstanceOf(McpAuthError);
          // The parse error never quotes the header (it may carry attacker text).
          if (header.length > 8) expect((error as Error).message).not.toContain(header);
        }
      }),
      { numRuns: RUNS, seed },
    );
  });

  it('pathological inputs are parsed in linear-ish time (no ReDoS)', () => {
    for (const header of [
      `Bearer ${'a="b", '.repeat(20_000)}`,
      `Bearer error="${'\\"'.repeat(50_000)}"`,
      `${'Bearer, '.repeat(20_000)}`,
      `Bearer ${' '.repeat(100_000)}x`,
      `Bearer ${'='.repeat(100_000)}`,
    ]) {
      const started = performance.now();
      try {
        parseWwwAuthenticate(header);
      } catch (error) {
        expect(error).toBeInstanceOf(McpAuthError);
      }
      // Generous bound: a quadratic parser takes tens of seconds on these sizes.
      expect(performance.now() - started).toBeLessThan(2_000);
    }
  });
});

describe('fuzz: resource server bearer extraction and challenge (RFC 6750 §2.1, §3)', () => {
  const authorization = fc.oneof(
    headerish,
    fc
      .tuple(
        fc.constantFrom('Bearer', 'bearer', 'BEARER', 'DPoP', 'Basic', ''),
        fc.constantFrom(' ', '  ', '\t', ''),
        fc.string({ unit: fc.constantFrom(...TOKEN_CHARS.split('')), maxLength: 60 }),
      )
      .map(([s, sp, t]) => `${s}${sp}${t}`),
  );
  const url = fc.oneof(
    fc.constant('/mcp'),
    fc.string({ maxLength: 80 }).map((q) => `/mcp?${q}`),
    fc.webPath().map((p) => `${p}?access_token=x`),
    fc.webQueryParameters().map((q) => `/mcp?${q}`),
  );

  it(`${RUNS} Authorization / URL pairs: a token matching RFC 6750 b64token, or a ResourceServerError`, () => {
    fc.assert(
      fc.property(
        fc.option(authorization, { nil: undefined }),
        fc.option(url, { nil: undefined }),
        fc.boolean(),
        (header, target, inBody) => {
          try {
            const token = extractBearerToken({ authorization: header, url: target, tokenInBody: inBody });
            expect(token).toMatch(/^[A-Za-z0-9\-._~+/]+=*$/);
            expect(header!.toLowerCase().startsWith('bearer')).toBe(true);
            expect(inBody).toBe(false);
          } catch (error) {
            expect(error).toBeInstanceOf(ResourceServerError);
          }
        },
      ),
      { numRuns: RUNS, seed },
    );
  });

  const anyText = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), nasty);
  it(`${RUNS} challenge builds from hostile values: always a single-line header the client parser reads back`, () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            errorDescription: anyText,
            realm: anyText,
            scope: fc.oneof(anyText, fc.array(anyText, { maxLength: 5 })),
            error: fc.constantFrom('invalid_token', 'insufficient_scope', 'invalid_request'),
            resourceMetadata: fc.webUrl(),
          },
          { requiredKeys: ['resourceMetadata'] },
        ),
        (params) => {
          let header: string;
          try {
            header = buildChallenge(params as never);
          } catch (error) {
            // Refusing an invalid scope list is acceptable; any other failure is not.
            expect(error).toBeInstanceOf(TypeError);
            return;
          }
          expect(header).toMatch(/^[\x20-\x7e\t]*$/);
          const [challenge] = parseWwwAuthenticate(header);
          expect(challenge!.scheme).toBe('bearer');
          expect(challenge!.params.resource_metadata).toBe(params.resourceMetadata);
          if (params.error) expect(challenge!.params.error).toBe(params.error);
        },
      ),
      { numRuns: RUNS, seed },
    );
  });

  it(`${RUNS} resource / origin values: canonicalisation and origin checks never throw unexpectedly`, () => {
    const allowed = new Set(['http://localhost:3000']);
    fc.assert(
      fc.property(fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), anyText), (value) => {
        const canonical = canonicalResource(value);
        if (canonical !== undefined) {
          expect(audienceIncludes(value, value)).toBe(true);
          expect(audienceIncludes([value], value)).toBe(true);
        } else {
          expect(audienceIncludes(value, 'http://localhost:3000/mcp')).toBe(false);
        }
        expect(audienceIncludes(value, 'http://localhost:3000/mcp')).toBe(canonical === 'http://localhost:3000/mcp');
        normalizeOrigin(value);
        try {
          checkOrigin(value, allowed);
          expect(normalizeOrigin(value)).toBe('http://localhost:3000');
        } catch (error) {
          expect(error).toBeInstanceOf(ResourceServerError);
        }
      }),
      { numRuns: RUNS, seed },
    );
  });
});
