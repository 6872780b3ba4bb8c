import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  assertAuthorized,
  assertInsufficientScope,
  assertInvalidToken,
  assertUnauthorized,
  callTool,
  startLoopbackServer,
  startTestAuthorizationServer,
  waitUntilExpired,
  type LoopbackServer,
  type TestAuthorizationServer,
} from '@mcp-auth-kit/testing';
import { createProtectedMcpServer, type ProtectedMcpServer } from '../src/server.js';

let mcp: LoopbackServer;
let as: TestAuthorizationServer;
let server: ProtectedMcpServer;
let resource: string;

beforeAll(async () => {
  mcp = await startLoopbackServer(); // the resource URI needs the port first
  resource = `${mcp.origin}/mcp`;
  as = await startTestAuthorizationServer({
    resources: { [resource]: ['notes:read', 'notes:write'], 'http://127.0.0.1:1/other': ['notes:read'] },
    users: ['alice'],
  });
  server = createProtectedMcpServer({ issuer: as.issuer, resource, clockTolerance: 0 });
  mcp.handle(server.app);
});
afterAll(async () => {
  await server?.close();
  await mcp?.close();
  await as?.close();
});

it('401 without a token → token → tool call', async () => {
  const prm = `${mcp.origin}/.well-known/oauth-protected-resource/mcp`;
  assertUnauthorized(await callTool(resource, { name: 'whoami' }), { scopes: ['notes:read'], resourceMetadata: prm });
  const token = await as.issueAccessToken({ resource, scopes: ['notes:read'] });
  const res = await callTool(resource, { token, name: 'whoami' });
  assertAuthorized(res);
  expect(res.body.result.content[0].text).toBe('alice');
});

it('403 insufficient_scope → step-up to notes:write → add_note works', async () => {
  const read = await as.issueAccessToken({ resource, scopes: ['notes:read'] });
  const denied = await callTool(resource, { token: read, name: 'add_note', arguments: { text: 'hi' } });
  const challenge = assertInsufficientScope(denied, { scopes: ['notes:write'] });
  const write = await as.issueAccessToken({ resource, scopes: challenge.scopes });
  assertAuthorized(await callTool(resource, { token: write, name: 'add_note', arguments: { text: 'hi' } }));
});

it('expired token → 401 invalid_token', async () => {
  const token = await as.issueAccessToken({ resource, scopes: ['notes:read'], lifetime: 1 });
  await waitUntilExpired(token);
  assertInvalidToken(await callTool(resource, { token, name: 'whoami' }));
});

it('token for another resource (wrong audience) → 401 invalid_token', async () => {
  const token = await as.issueAccessToken({ resource: 'http://127.0.0.1:1/other' });
  assertInvalidToken(await callTool(resource, { token, name: 'whoami' }));
});
