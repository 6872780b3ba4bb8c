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
  readMcpResponse,
  ResponseAssertionError,
  type McpResponse,
} from '@mcp-auth-kit/testing';

const PRM = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';
const res = (status: number, challenge?: string) =>
  new Response(null, { status, headers: challenge === undefined ? {} : { 'www-authenticate': challenge } });

function failure(run: () => unknown): ResponseAssertionError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AssertionError);
    expect(err).toBeInstanceOf(ResponseAssertionError);
    return err as ResponseAssertionError;
  }
  throw new Error('expected the assertion to fail');
}

describe('challenge parsing (RFC 9110 §11.6.1 via @mcp-auth-kit/client)', () => {
  it('reads error, scope, resource_metadata and realm from a Bearer challenge among others', () => {
    const c = parseBearerChallenge(
      `Basic realm="x", Bearer realm="mcp", error="insufficient_scope", scope="a b", resource_metadata="${PRM}"`,
    );
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
    expect(getBearerChallenge({ status: 401, headers: { 'WWW-Authenticate': `Bearer resource_metadata="${PRM}"` } }).resourceMetadata).toBe(
      PRM,
    );
    expect(getBearerChallenge(res(401, `Bearer resource_metadata="${PRM}"`)).resourceMetadata).toBe(PRM);
  });
});

describe('challenge assertions pass on correct challenges', () => {
  it('RFC 6750 §3.1 + RFC 9728 §5.1: 401 without error, with scope and resource_metadata', () => {
    expect(
      assertUnauthorized(res(401, `Bearer scope="notes:read", resource_metadata="${PRM}"`), {
        scopes: ['notes:read'],
        resourceMetadata: PRM,
      }).scopes,
    ).toEqual(['notes:read']);
  });
  it('401 invalid_token', () => {
    assertInvalidToken(res(401, `Bearer error="invalid_token", resource_metadata="${PRM}"`));
  });
  it('MCP §Scope Challenge Handling: 403 insufficient_scope containing the needed scope', () => {
    assertInsufficientScope(res(403, `Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="${PRM}"`), {
      scopes: ['notes:write'],
    });
  });
  it('assertAuthorized accepts 2xx', () => {
    assertAuthorized(res(200));
  });
});

describe('challenge assertions fail with clear AssertionErrors', () => {
  it('wrong status names both statuses and shows the challenge', () => {
    const e = failure(() => assertInvalidToken(res(200)));
    expect(e.reason).toBe('expected HTTP 401, got 200 (no WWW-Authenticate)');
    expect(e.message.split('\n')[0]).toBe(e.reason);
    expect(e.actual).toBe(200);
    expect(e.expected).toBe(401);
  });
  it('missing WWW-Authenticate', () => {
    expect(failure(() => assertUnauthorized(res(401))).message).toMatch(/expected a WWW-Authenticate header on the HTTP 401 response/);
  });
  it('not a Bearer challenge', () => {
    expect(failure(() => assertUnauthorized(res(401, 'Basic realm="x"'))).message).toMatch(
      /expected a Bearer challenge, got WWW-Authenticate: Basic/,
    );
  });
  it('RFC 6750 §3.1: an error code on a request without credentials is a failure', () => {
    const e = failure(() => assertUnauthorized(res(401, `Bearer error="invalid_token", resource_metadata="${PRM}"`)));
    expect(e.message).toMatch(/without error.*got error="invalid_token"/);
  });
  it('wrong error code', () => {
    expect(failure(() => assertInvalidToken(res(401, `Bearer error="invalid_request", resource_metadata="${PRM}"`))).reason).toBe(
      'expected error="invalid_token" in the challenge, got error="invalid_request"',
    );
  });
  it('RFC 9728 §5.1: missing resource_metadata', () => {
    expect(failure(() => assertInvalidToken(res(401, 'Bearer error="invalid_token"'))).message).toMatch(/resource_metadata.*found none/);
  });
  it('wrong resource_metadata URL', () => {
    expect(
      failure(() => assertUnauthorized(res(401, 'Bearer resource_metadata="https://evil.example/prm"'), { resourceMetadata: PRM })).message,
    ).toMatch(/got "https:\/\/evil\.example\/prm"/);
  });
  it('step-up scope missing from the 403 challenge', () => {
    const e = failure(() =>
      assertInsufficientScope(res(403, `Bearer error="insufficient_scope", scope="notes:read", resource_metadata="${PRM}"`), {
        scopes: ['notes:write'],
      }),
    );
    expect(e.reason).toBe('expected the challenge\'s scope to include notes:write, got scope="notes:read"');
  });
  it('exactScopes refuses extra scopes', () => {
    const r = res(401, `Bearer scope="a b", resource_metadata="${PRM}"`);
    expect(failure(() => assertChallenge(r, { scopes: ['a'], exactScopes: true })).message).toMatch(/exactly "a", got scope="a b"/);
  });
  it('assertAuthorized shows the challenge of a refused request', () => {
    expect(failure(() => assertAuthorized(res(403, 'Bearer error="insufficient_scope"'))).message).toMatch(
      /got HTTP 403 \(WWW-Authenticate: Bearer error="insufficient_scope"\)/,
    );
  });
});

describe('every failed assertion shows the response: status, headers and body', () => {
  // What callTool returns: the body is already read, so the message can show it.
  const body = { jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: Unsupported protocol version: 2026-07-28' }, id: null };
  const mcpResponse = (status: number, headers: Record<string, string>) => ({
    status,
    headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'r-1', ...headers }),
    body,
    text: JSON.stringify(body),
  });
  const bare = mcpResponse(400, {});
  const withChallenge = mcpResponse(401, { 'www-authenticate': 'Bearer error="invalid_token"' });
  const cases: [string, () => unknown, number][] = [
    ['assertUnauthorized', () => assertUnauthorized(bare), 400],
    ['assertInvalidToken', () => assertInvalidToken(bare), 400],
    ['assertInsufficientScope', () => assertInsufficientScope(bare, { scopes: ['x'] }), 400],
    ['assertChallenge (status)', () => assertChallenge(bare, { status: 401 }), 400],
    ['assertChallenge (no challenge)', () => assertChallenge(bare, {}), 400],
    ['assertChallenge (resource_metadata)', () => assertChallenge(withChallenge, {}), 401],
    ['assertChallenge (error)', () => assertChallenge(withChallenge, { error: 'insufficient_scope', resourceMetadata: false }), 401],
    ['assertChallenge (scopes)', () => assertChallenge(withChallenge, { scopes: ['x'], resourceMetadata: false }), 401],
    ['assertAuthorized', () => assertAuthorized(withChallenge), 401],
    ['getBearerChallenge', () => getBearerChallenge(bare), 400],
  ];
  it.each(cases)('%s', (_name, run, status) => {
    const e = failure(run);
    expect(e.message).toContain(`Response: HTTP ${status}`);
    expect(e.message).toContain('  content-type: application/json');
    expect(e.message).toContain('  x-request-id: r-1');
    expect(e.message).toContain('Bad Request: Unsupported protocol version: 2026-07-28');
    expect(e.response.status).toBe(status);
  });

  it('supertest-style responses: plain header object and raw text', () => {
    const e = failure(() =>
      assertAuthorized({ status: 500, headers: { 'Content-Type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] }, text: 'boom' } as never),
    );
    expect(e.message).toContain('Response: HTTP 500');
    expect(e.message).toContain('  content-type: text/plain');
    expect(e.message).toContain('  set-cookie: a=1, b=2');
    expect(e.message).toContain('  boom');
  });

  it('a long body is cut, saying how much was left out', () => {
    const e = failure(() => assertAuthorized({ status: 502, headers: {}, text: 'x'.repeat(5000) } as never));
    expect(e.message).toContain('… (1000 more characters)');
  });

  it('a fetch Response: the message says its body is not shown and how to see it; readMcpResponse shows it', async () => {
    const raw = () => new Response('{"error":"nope"}', { status: 400, headers: { 'content-type': 'application/json' } });
    const e = failure(() => assertUnauthorized(raw()));
    expect(e.message).toContain('Response: HTTP 400');
    expect(e.message).toContain('readMcpResponse');
    expect(e.message).not.toContain('nope');
    expect(failure(() => assertUnauthorized(new Response(null, { status: 204 }))).message).toContain('Body:\n  (empty)');
    const read = await readMcpResponse(raw());
    expect(read.body).toEqual({ error: 'nope' });
    expect(failure(() => assertUnauthorized(read)).message).toContain('{"error":"nope"}');
  });

  it("the kit's own responses also list the requests that led to them (version fallback, session)", () => {
    const response: McpResponse = {
      ...mcpResponse(404, {}),
      protocolVersion: '2025-11-25',
      sessionId: 's-1',
      exchanges: [
        { httpMethod: 'POST', method: 'tools/call', protocolVersion: '2026-07-28', status: 400 },
        { httpMethod: 'POST', method: 'initialize', protocolVersion: '2025-11-25', status: 200 },
        { httpMethod: 'POST', method: 'tools/call', protocolVersion: '2025-11-25', sessionId: 's-1', status: 404 },
      ],
    };
    const e = failure(() => assertAuthorized(response));
    expect(e.message).toContain(
      'Requests made for this response:\n  tools/call @2026-07-28 → 400\n  initialize @2025-11-25 → 200\n  tools/call @2025-11-25 [session s-1] → 404',
    );
  });
});

describe('supertest responses', () => {
  it('RFC 9728 §5.1: the assertions read a supertest response of a real protected app', async () => {
    // No token is sent, so the issuer is never contacted.
    const server = createProtectedMcpServer({ issuer: 'http://127.0.0.1:9', resource: 'http://127.0.0.1/mcp' });
    try {
      const res = await request(server.app).post('/mcp').set('content-type', 'application/json').send('{}');
      const challenge = assertUnauthorized(res, {
        scopes: ['notes:read'],
        resourceMetadata: 'http://127.0.0.1/.well-known/oauth-protected-resource/mcp',
      });
      expect(challenge.error).toBeUndefined();
      const e = failure(() => assertInvalidToken(res));
      expect(e.message).toMatch(/expected error="invalid_token" in the challenge, got no error/);
      // supertest keeps the raw body in `text`: the RS's JSON error body is shown.
      expect(e.message).toContain(res.text);
      expect(res.text).toContain('error_description');
    } finally {
      await server.close();
    }
  });
});
