// mcp-auth.test.ts: an MCP SDK v2 server (`@modelcontextprotocol/server` + `@modelcontextprotocol/node`)
// behind @mcp-auth-kit/resource-server, tested with real tokens. In your project the server part
// lives in your source.
import express, { type Request, type Response } from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as z from 'zod';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { createResourceServer } from '@mcp-auth-kit/resource-server';
import {
  assertAuthorized, assertInsufficientScope, assertInvalidToken, assertUnauthorized, callTool,
  startLoopbackServer, startTestAuthorizationServer, waitUntilExpired,
  type LoopbackServer, type TestAuthorizationServer,
} from '@mcp-auth-kit/testing';

// ---- The server under test ----
function createNotesServer(): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Who the token belongs to' }, (ctx) => ({
    content: [{ type: 'text', text: String(ctx.http?.authInfo?.extra?.sub) }],
  }));
  server.registerTool('add_note', { description: 'Stores a note', inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
    content: [{ type: 'text', text: `saved: ${text}` }],
  }));
  return server;
}

function createApp(options: { issuer: string; resource: string; clockTolerance?: number }) {
  const rs = createResourceServer({
    resource: options.resource,
    authorizationServers: [options.issuer],
    scopesSupported: ['notes:read', 'notes:write'],
    scopePolicy: { default: ['notes:read'], tools: { add_note: ['notes:write'] } },
    clockTolerance: options.clockTolerance,
  });
  // The 2026-07-28 wire, and the 2025-11-25 wire (initialize, no session) for older clients.
  const mcp = createMcpHandler(createNotesServer, { legacy: 'stateless' });
  const handle = toNodeHandler(mcp);
  const app = express();
  app.use(rs.metadataHandler); // /.well-known/oauth-protected-resource/mcp
  app.all(new URL(options.resource).pathname, rs.protect, (req: Request, res: Response) => void handle(req, res, req.body));
  return {
    app,
    async close() {
      await mcp.close();
      await rs.close();
    },
  };
}

// ---- The test ----
let listener: LoopbackServer;
let as: TestAuthorizationServer;
let server: ReturnType<typeof createApp>;
let resource: string;

beforeAll(async () => {
  listener = await startLoopbackServer(); // port first: the resource URI contains it
  resource = `${listener.origin}/mcp`;
  as = await startTestAuthorizationServer({
    resources: { [resource]: ['notes:read', 'notes:write'], 'http://127.0.0.1:1/other': ['notes:read'] },
    users: ['alice'],
  });
  server = createApp({ issuer: as.issuer, resource, clockTolerance: 0 });
  listener.handle(server.app);
});
afterAll(async () => {
  await server?.close();
  await listener?.close();
  await as?.close();
});

it('401 without a token; with a token from the code flow the tool runs', async () => {
  assertUnauthorized(await callTool(resource, { name: 'whoami' }), { scopes: ['notes:read'] });
  const token = await as.issueAccessToken({ resource, scopes: ['notes:read'] });
  const res = await callTool(resource, { token, name: 'whoami' }); // one request on the 2026-07-28 wire
  assertAuthorized(res);
  expect(res.protocolVersion).toBe('2026-07-28');
  expect(res.body.result.content[0].text).toBe('alice');
});

it('403 insufficient_scope, then step-up to notes:write', async () => {
  const read = await as.issueAccessToken({ resource, scopes: ['notes:read'] });
  const denied = await callTool(resource, { token: read, name: 'add_note', arguments: { text: 'hi' } });
  const { scopes } = assertInsufficientScope(denied, { scopes: ['notes:write'] });
  const write = await as.issueAccessToken({ resource, scopes });
  const res = await callTool(resource, { token: write, name: 'add_note', arguments: { text: 'hi' } });
  assertAuthorized(res);
  expect(res.body.result.content[0].text).toBe('saved: hi');
});

it('expired token and token for another resource: 401 invalid_token', async () => {
  const expired = await as.issueAccessToken({ resource, lifetime: 1 });
  await waitUntilExpired(expired); // the server runs with clockTolerance: 0
  assertInvalidToken(await callTool(resource, { token: expired, name: 'whoami' }));
  const other = await as.issueAccessToken({ resource: 'http://127.0.0.1:1/other' });
  assertInvalidToken(await callTool(resource, { token: other, name: 'whoami' }));
});

it('older clients: the same server on the 2025-11-25 wire', async () => {
  const token = await as.issueAccessToken({ resource, scopes: ['notes:read'] });
  const res = await callTool(resource, { token, name: 'whoami', protocolVersion: '2025-11-25' });
  assertAuthorized(res);
  expect(res.body.result.content[0].text).toBe('alice');
});
