/**
 * The kit must catch the bugs a mocked middleware hides: the same checks pass against the
 * correctly configured example server and throw AssertionError against deliberately
 * misconfigured instances of it.
 */
import { AssertionError } from 'node:assert';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertAuthorized,
  assertInsufficientScope,
  assertInvalidToken,
  callTool,
  ResponseAssertionError,
  startLoopbackServer,
  startTestAuthorizationServer,
  type LoopbackServer,
  type TestAuthorizationServer,
} from '@mcp-auth-kit/testing';
import { createProtectedMcpServer, type ProtectedMcpServerOptions } from '../../../examples/protected-mcp-server/src/server.js';

const SCOPES = ['notes:read', 'notes:write'];
const OTHER = 'http://127.0.0.1:1/mcp'; // another MCP server's resource: same path, other port
const closers: { close(): Promise<void> }[] = [];
let as: TestAuthorizationServer;
const servers: Record<'good' | 'otherAudience' | 'noToolScopes' | 'otherIssuer', string> = {} as never;

type Breakage = (o: ProtectedMcpServerOptions) => ProtectedMcpServerOptions;
const breakages: Record<keyof typeof servers, Breakage> = {
  good: (o) => o,
  // Resource copied from another deployment: its audience check now accepts that server's tokens.
  otherAudience: (o) => ({ ...o, resource: OTHER }),
  // The tool → scope table was lost: writes go through with a read-only token.
  noToolScopes: (o) => ({ ...o, toolScopes: {} }),
  // Trusts an issuer that is not the AS handing out the tokens.
  otherIssuer: (o) => ({ ...o, issuer: 'http://127.0.0.1:2' }),
};

beforeAll(async () => {
  // Ports first: every resource URI must be known to the AS when it starts.
  const listeners = {} as Record<keyof typeof servers, LoopbackServer>;
  for (const name of Object.keys(breakages) as (keyof typeof servers)[]) {
    listeners[name] = await startLoopbackServer();
    closers.push(listeners[name]);
    servers[name] = `${listeners[name].origin}/mcp`;
  }
  const resources = Object.fromEntries([OTHER, ...Object.values(servers)].map((r) => [r, SCOPES]));
  as = await startTestAuthorizationServer({ resources, users: ['alice'] });
  for (const [name, listener] of Object.entries(listeners) as [keyof typeof servers, LoopbackServer][]) {
    const server = createProtectedMcpServer(breakages[name]({ issuer: as.issuer, resource: servers[name], clockTolerance: 0 }));
    closers.push(server);
    // A misconfigured resource option still serves the same path: the route stays /mcp.
    listener.handle(server.app);
  }
});
afterAll(async () => {
  for (const c of closers.reverse()) await c.close();
  await as?.close();
});

// The checks a user's test suite would run (as in examples/protected-mcp-server/test).
const checks = {
  async wrongAudienceRefused(url: string) {
    const token = await as.issueAccessToken({ resource: OTHER, scopes: ['notes:read'] });
    assertInvalidToken(await callTool(url, { token, name: 'whoami' }));
  },
  async stepUpDemanded(url: string) {
    const token = await as.issueAccessToken({ resource: url, scopes: ['notes:read'] });
    assertInsufficientScope(await callTool(url, { token, name: 'add_note', arguments: { text: 'x' } }), { scopes: ['notes:write'] });
  },
  async validTokenAccepted(url: string) {
    const token = await as.issueAccessToken({ resource: url, scopes: ['notes:read'] });
    assertAuthorized(await callTool(url, { token, name: 'whoami' }));
  },
};

async function assertionFailure(run: Promise<void>): Promise<ResponseAssertionError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the check should have failed against the misconfigured server').toBeInstanceOf(AssertionError);
  expect(error).toBeInstanceOf(ResponseAssertionError);
  return error as ResponseAssertionError;
}

describe('the checks pass against the correctly configured server', () => {
  it('RFC 8707 / RFC 9068 §4: a token for another resource is refused', () => checks.wrongAudienceRefused(servers.good));
  it('MCP §Scope Challenge Handling: a write with a read-only token gets 403 insufficient_scope', () =>
    checks.stepUpDemanded(servers.good));
  it('a valid token is accepted', () => checks.validTokenAccepted(servers.good));
});

describe('the same checks catch misconfigured servers', () => {
  it('audience check defeated (resource option points at another server) → wrong-audience check fails', async () => {
    const e = await assertionFailure(checks.wrongAudienceRefused(servers.otherAudience));
    expect(e.reason).toBe('expected HTTP 401, got 200 (no WWW-Authenticate)');
    // The message shows what the server did instead: the tool ran for the foreign token.
    expect(e.message).toContain('Response: HTTP 200');
    expect(e.message).toMatch(/"text":"alice"/);
  });

  it('tool scope policy missing → step-up check fails', async () => {
    const e = await assertionFailure(checks.stepUpDemanded(servers.noToolScopes));
    expect(e.message).toMatch(/^expected HTTP 403, got 200/);
  });

  it('wrong trusted issuer → valid tokens are refused and the check shows the challenge', async () => {
    const e = await assertionFailure(checks.validTokenAccepted(servers.otherIssuer));
    expect(e.message).toMatch(/^expected the request to be authorized, got HTTP 401 \(WWW-Authenticate: Bearer error="invalid_token"/);
  });
});
