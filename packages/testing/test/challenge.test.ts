import { AssertionError } from 'node:assert';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createProtectedMcpServer } from '../../../examples/protected-mcp-server/src/server.js';
import {
  assertAuthorized,
  assertChallenge,
  assertInsufficientScope,
  assertInvalidToken,
  assertUnauthorized,
  getBearerChallenge,
  parseBearerChallenge,
} from '@mcp-auth-kit/testing';

const PRM = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';
const res = (status: number, challenge?: string) =>
  new Response(null, { status, headers: challenge === undefined ? {} : { 'www-authenticate': challenge } });

function failure(run: () => unknown): AssertionError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AssertionError);
    return err as AssertionError;
  }
  throw new Error('expected the assertion to fail');
}

describe('challenge parsing (RFC 9110 §11.6.1 via @mcp-auth-kit/client)', () => {
  it('reads error, scope, resource_metadata and realm from a Bearer challenge among others', () => {
    const c = parseBearerChallenge(`Basic realm="x", Bearer realm="mcp", error="insufficient_scope", scope="a b", resource_metadata="${PRM}"`);
    expect(c).toMatchObject({ scheme: 'bearer', realm: 'mcp', error: 'insufficient_scope', scopes: ['a', 'b'], resourceMetadata: PRM });
  });

  it('scheme names are case-insensitive; quoted-pair escapes are unescaped', () => {
    expect(parseBearerChallenge('bEaReR error_description="say \\"hi\\""')?.errorDescription).toBe('say "hi"');
  });

  it('no Bearer challenge or malformed header → undefined', () => {
    expect(parseBearerChallenge('Basic realm="x"')).toBeUndefined();
    expect(parseBearerChallenge('Bearer error="unterminated')).toBeUndefined();
  });

  it('reads headers from fetch Headers and from plain (supertest-style) objects', () => {
    expect(getBearerChallenge({ status: 401, headers: { 'WWW-Authenticate': `Bearer resource_metadata="${PRM}"` } }).resourceMetadata).toBe(PRM);
    expect(getBearerChallenge(res(401, `Bearer resource_metadata="${PRM}"`)).resourceMetadata).toBe(PRM);
  });
});

describe('challenge assertions pass on correct challenges', () => {
  it('RFC 6750 §3.1 + RFC 9728 §5.1: 401 without error, with scope and resource_metadata', () => {
    expect(assertUnauthorized(res(401, `Bearer scope="notes:read", resource_metadata="${PRM}"`), { scopes: ['notes:read'], resourceMetadata: PRM }).scopes).toEqual(['notes:read']);
  });
  it('401 invalid_token', () => {
    assertInvalidToken(res(401, `Bearer error="invalid_token", resource_metadata="${PRM}"`));
  });
  it('MCP §Scope Challenge Handling: 403 insufficient_scope containing the needed scope', () => {
    assertInsufficientScope(res(403, `Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="${PRM}"`), { scopes: ['notes:write'] });
  });
  it('assertAuthorized accepts 2xx', () => {
    assertAuthorized(res(200));
  });
});

describe('challenge assertions fail with clear AssertionErrors', () => {
  it('wrong status names both statuses and shows the challenge', () => {
    const e = failure(() => assertInvalidToken(res(200)));
    expect(e.message).toBe('expected HTTP 401, got 200 (no WWW-Authenticate)');
    expect(e.actual).toBe(200);
    expect(e.expected).toBe(401);
  });
  it('missing WWW-Authenticate', () => {
    expect(failure(() => assertUnauthorized(res(401))).message).toMatch(/expected a WWW-Authenticate header on the HTTP 401 response/);
  });
  it('not a Bearer challenge', () => {
    expect(failure(() => assertUnauthorized(res(401, 'Basic realm="x"'))).message).toMatch(/expected a Bearer challenge, got WWW-Authenticate: Basic/);
  });
  it('RFC 6750 §3.1: an error code on a request without credentials is a failure', () => {
    const e = failure(() => assertUnauthorized(res(401, `Bearer error="invalid_token", resource_metadata="${PRM}"`)));
    expect(e.message).toMatch(/without error.*got error="invalid_token"/);
  });
  it('wrong error code', () => {
    expect(failure(() => assertInvalidToken(res(401, `Bearer error="invalid_request", resource_metadata="${PRM}"`))).message).toBe(
      'expected error="invalid_token" in the challenge, got error="invalid_request"',
    );
  });
  it('RFC 9728 §5.1: missing resource_metadata', () => {
    expect(failure(() => assertInvalidToken(res(401, 'Bearer error="invalid_token"'))).message).toMatch(/resource_metadata.*found none/);
  });
  it('wrong resource_metadata URL', () => {
    expect(failure(() => assertUnauthorized(res(401, 'Bearer resource_metadata="https://evil.example/prm"'), { resourceMetadata: PRM })).message).toMatch(/got "https:\/\/evil\.example\/prm"/);
  });
  it('step-up scope missing from the 403 challenge', () => {
    const e = failure(() => assertInsufficientScope(res(403, `Bearer error="insufficient_scope", scope="notes:read", resource_metadata="${PRM}"`), { scopes: ['notes:write'] }));
    expect(e.message).toBe('expected the challenge\'s scope to include notes:write, got scope="notes:read"');
  });
  it('exactScopes refuses extra scopes', () => {
    const r = res(401, `Bearer scope="a b", resource_metadata="${PRM}"`);
    expect(failure(() => assertChallenge(r, { scopes: ['a'], exactScopes: true })).message).toMatch(/exactly "a", got scope="a b"/);
  });
  it('assertAuthorized shows the challenge of a refused request', () => {
    expect(failure(() => assertAuthorized(res(403, 'Bearer error="insufficient_scope"'))).message).toMatch(/got HTTP 403 \(WWW-Authenticate: Bearer error="insufficient_scope"\)/);
  });
});

describe('supertest responses', () => {
  it('RFC 9728 §5.1: the assertions read a supertest response of a real protected app', async () => {
    // No token is sent, so the issuer is never contacted.
    const server = createProtectedMcpServer({ issuer: 'http://127.0.0.1:9', resource: 'http://127.0.0.1/mcp' });
    try {
      const res = await request(server.app).post('/mcp').set('content-type', 'application/json').send('{}');
      const challenge = assertUnauthorized(res, { scopes: ['notes:read'], resourceMetadata: 'http://127.0.0.1/.well-known/oauth-protected-resource/mcp' });
      expect(challenge.error).toBeUndefined();
      expect(failure(() => assertInvalidToken(res)).message).toMatch(/expected error="invalid_token" in the challenge, got no error/);
    } finally {
      await server.close();
    }
  });
});
