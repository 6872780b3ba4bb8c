// mcp-auth.test.ts: an MCP SDK v1 server (`@modelcontextprotocol/sdk`, StreamableHTTPServerTransport)
// behind @mcp-auth-kit/resource-server, tested with real tokens. In your project the server part
// lives in your source; both transport modes are shown, keep the one you use.
import { randomUUID } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createResourceServer } from '@mcp-auth-kit/resource-server';
import {
  assertAuthorized, assertInsufficientScope, assertInvalidToken, assertUnauthorized, callTool, openMcpSession,
  startLoopbackServer, startTestAuthorizationServer, waitUntilExpired,
  type LoopbackServer, type TestAuthorizationServer,
} from '@mcp-auth-kit/testing';

// ---- The server under test ----
function createNotesServer(): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Who the token belongs to' }, (extra) => ({
    content: [{ type: 'text', text: String(extra.authInfo?.extra?.sub) }],
  }));
  server.registerTool('add_note', { description: 'Stores a note', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text: `saved: ${text}` }],
  }));
  return server;
}

type AuthedRequest = Request & { auth?: AuthInfo }; // rs.protect sets req.auth

function createApp(options: { issuer: string; resource: string; stateful: boolean; clockTolerance?: number }) {
  const rs = createResourceServer({
    resource: options.resource,
    authorizationServers: [options.issuer],
    scopesSupported: ['notes:read', 'notes:write'],
    scopePolicy: { default: ['notes:read'], tools: { add_note: ['notes:write'] } },
    clockTolerance: options.clockTolerance,
  });
  const app = express();
  app.use(rs.metadataHandler); // /.well-known/oauth-protected-resource/mcp
  const path = new URL(options.resource).pathname;
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; user: unknown }>();

  if (!options.stateful) {
    app.post(path, rs.protect, async (req: AuthedRequest, res: Response) => {
      const server = createNotesServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
  } else {
    app.all(path, rs.protect, async (req: AuthedRequest, res: Response) => {
      const user = req.auth?.extra?.sub;
      const sessionId = req.header('mcp-session-id');
      if (sessionId !== undefined) {
        const session = sessions.get(sessionId);
        // A session stays with the user who opened it (MCP Security Best Practices, session hijacking).
        if (!session || session.user !== user) {
          res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
          return;
        }
        await session.transport.handleRequest(req, res, req.body);
        return;
      }
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
        res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null });
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, { transport, user }),
      });
      transport.onclose = () => void sessions.delete(transport.sessionId ?? '');
      await createNotesServer().connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
  }
  return {
    app,
    async close() {
      for (const { transport } of sessions.values()) await transport.close();
      await rs.close();
    },
  };
}

// ---- The test ----
describe.each([
  { mode: 'stateless', stateful: false },
  { mode: 'stateful (Mcp-Session-Id)', stateful: true },
])('SDK v1 server, $mode', ({ stateful }) => {
  let listener: LoopbackServer;
  let as: TestAuthorizationServer;
  let server: ReturnType<typeof createApp>;
  let resource: string;

  beforeAll(async () => {
    listener = await startLoopbackServer(); // port first: the resource URI contains it
    resource = `${listener.origin}/mcp`;
    as = await startTestAuthorizationServer({
      resources: { [resource]: ['notes:read', 'notes:write'], 'http://127.0.0.1:1/other': ['notes:read'] },
      users: ['alice', 'bob'],
    });
    server = createApp({ issuer: as.issuer, resource, stateful, clockTolerance: 0 });
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
    // SDK v1 refuses the 2026-07-28 wire: the kit falls back to initialize (2025-11-25).
    const res = await callTool(resource, { token, name: 'whoami' });
    assertAuthorized(res);
    expect(res.protocolVersion).toBe('2025-11-25');
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

  it.runIf(stateful)('a session belongs to the user who opened it', async () => {
    const session = await openMcpSession(resource, { token: await as.issueAccessToken({ resource, subject: 'alice' }) });
    expect(session.sessionId).toBeDefined();
    assertAuthorized(await session.callTool({ name: 'whoami' }));
    const bob = await as.issueAccessToken({ resource, subject: 'bob' });
    expect((await session.callTool({ name: 'whoami', token: bob })).status).toBe(404);
    await session.close();
  });
});
