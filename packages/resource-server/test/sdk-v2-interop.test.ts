import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type express from 'express';
import request from 'supertest';
import { McpServer } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { ResourceServer } from '../src/index.js';
import { rpc, signToken, type StubIssuer, type SigningKey, stopServers } from './helpers/harness.js';
import { expectWhoamiAuthInfo, startNotesApp, statelessMcp } from './helpers/notes-app.js';

let as: StubIssuer;
let key: SigningKey;
let rs: ResourceServer;
let app: express.Express;

beforeAll(async () => {
  ({ as, key, rs, app } = await startNotesApp((app, rs) =>
    app.post(
      '/mcp',
      rs.protect,
      statelessMcp(
        () => {
          const server = new McpServer({ name: 'notes-v2', version: '1.0.0' });
          server.registerTool('whoami', { description: 'echo the auth info' }, (ctx) => ({
            content: [{ type: 'text', text: JSON.stringify(ctx.http?.authInfo) }],
          }));
          return server;
        },
        () => new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }),
      ),
    ),
  ));
});
afterAll(() => stopServers(rs, as));

describe('interop with @modelcontextprotocol/server + node (SDK v2)', () => {
  it('NodeStreamableHTTPServerTransport passes req.auth to tools as ctx.http.authInfo', async () => {
    const token = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read', jti: 'v2-1' } });
    const send = (body: object) =>
      request(app)
        .post('/mcp')
        .set('Authorization', `Bearer ${token}`)
        .set('Accept', 'application/json, text/event-stream')
        .set('MCP-Protocol-Version', '2025-11-25')
        .send(body);
    const init = await send(
      rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } }),
    );
    expect(init.status, init.text).toBe(200);
    const res = await send(rpc('tools/call', { name: 'whoami', arguments: {} }, 2));
    expect(res.status, res.text).toBe(200);
    expectWhoamiAuthInfo(res, {
      token,
      issuer: as.issuer,
      jti: 'v2-1',
      more: { resourceMetadataUrl: 'http://localhost:3000/.well-known/oauth-protected-resource/mcp' },
    });
  });
});
