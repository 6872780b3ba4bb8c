import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type express from 'express';
import request from 'supertest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ResourceServer } from '../src/index.js';
import { rpc, signToken, type StubIssuer, type SigningKey, stopServers } from './helpers/harness.js';
import { expectWhoamiAuthInfo, startNotesApp, statelessMcp } from './helpers/notes-app.js';

let as: StubIssuer;
let key: SigningKey;
let rs: ResourceServer;
let app: express.Express;

function mcpServer(): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool('whoami', { description: 'echo the auth info' }, (extra) => ({
    content: [{ type: 'text', text: JSON.stringify(extra.authInfo) }],
  }));
  server.registerTool('add_note', { description: 'write' }, () => ({ content: [{ type: 'text', text: 'added' }] }));
  return server;
}

beforeAll(async () => {
  // stateless SDK v1 endpoint, exactly as an existing express MCP server would mount it
  ({ as, key, rs, app } = await startNotesApp((app, rs) =>
    app.post(
      '/mcp',
      rs.protect,
      statelessMcp(mcpServer, () => new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })),
    ),
  ));
});
afterAll(() => stopServers(rs, as));

const init = rpc('initialize', {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'test', version: '1' },
});

function mcp(body: unknown, token: string) {
  return request(app)
    .post('/mcp')
    .set('Authorization', `Bearer ${token}`)
    .set('Accept', 'application/json, text/event-stream')
    .send(body as object);
}

describe('interop with @modelcontextprotocol/sdk (v1) StreamableHTTPServerTransport', () => {
  it('the SDK reads the body protect parsed and hands req.auth to tools as extra.authInfo', async () => {
    const token = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read', jti: 'sdk-1' } });
    const initRes = await mcp(init, token).expect(200);
    expect(initRes.body.result.serverInfo.name).toBe('notes');
    const res = await mcp(rpc('tools/call', { name: 'whoami', arguments: {} }, 2), token).expect(200);
    const authInfo = expectWhoamiAuthInfo(res, { token, issuer: as.issuer, jti: 'sdk-1' });
    expect(typeof authInfo.expiresAt).toBe('number');
  });

  it('per-tool 403 is sent before the SDK handler; with the scope the SDK runs the tool', async () => {
    const reader = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read' } });
    const denied = await mcp(rpc('tools/call', { name: 'add_note', arguments: {} }, 3), reader).expect(403);
    expect(denied.headers['www-authenticate']).toContain('scope="notes:read notes:write"');
    const writer = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read notes:write' } });
    const ok = await mcp(rpc('tools/call', { name: 'add_note', arguments: {} }, 4), writer).expect(200);
    expect(ok.body.result.content[0].text).toBe('added');
  });
});
