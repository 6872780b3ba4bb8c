// The MCP SDK client transports (v1 @modelcontextprotocol/sdk and v2 @modelcontextprotocol/client)
// use @mcp-auth-kit/client through their `fetch` option against an MCP server behind OAuth.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { createAuthFetch, createSdkAuthProvider, McpAuthClient, MemoryStore } from '../src/index.js';
import { headlessBrowser, startNotesPair, type TestAs, type TestRs } from './helpers/harness.js';
import { startMcpResourceServer } from './helpers/mcp-resource-server.js';

let as: TestAs;
let rs: TestRs;

function mcpServer() {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool('read', { description: 'read notes' }, async () => ({ content: [{ type: 'text', text: 'notes' }] }));
  server.registerTool('write', { description: 'write a note (needs notes:write)' }, async () => ({
    content: [{ type: 'text', text: 'written' }],
  }));
  return server;
}

beforeAll(async () => {
  [as, rs] = await startNotesPair((issuerOf) => startMcpResourceServer(issuerOf, mcpServer));
});
afterAll(async () => {
  await rs?.close();
  await as?.close();
});

const auth = () => new McpAuthClient({ clientName: 'sdk adapter test', store: new MemoryStore(), openAuthorizationUrl: headlessBrowser });

describe('SDK adapters via the transport fetch option', () => {
  it('SDK v1 StreamableHTTPClientTransport: connect, list tools, step-up on a write tool', async () => {
    const client = new ClientV1({ name: 'v1', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(rs.mcpUrl), { fetch: createAuthFetch(auth()) }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['read', 'write']);
    const n = as.authorizationRequests.length;
    const result = await client.callTool({ name: 'write', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'written' }]);
    expect(as.authorizationRequests.length).toBe(n + 1);
    expect(as.authorizationRequests.at(-1)!.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['notes:read', 'notes:write']));
    await client.close();
  });

  it('SDK v2 authProvider adapter: 401 → onUnauthorized runs our flow, token() supplies the bearer token', async () => {
    const a = auth();
    const client = new ClientV2({ name: 'v2-provider', version: '1.0.0' });
    await client.connect(new TransportV2(new URL(rs.mcpUrl), { authProvider: createSdkAuthProvider(a, rs.mcpUrl) }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['read', 'write']);
    const sent = rs.requests.at(-1)!.authorization!;
    expect(sent).toBe(`Bearer ${(await a.getTokens(rs.mcpUrl))!.access_token}`);
    await client.close();
  });

  it('SDK v2 StreamableHTTPClientTransport: connect, list tools, call tools', async () => {
    const client = new ClientV2({ name: 'v2', version: '1.0.0' });
    await client.connect(new TransportV2(new URL(rs.mcpUrl), { fetch: createAuthFetch(auth()) }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['read', 'write']);
    const result = await client.callTool({ name: 'write', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'written' }]);
    await client.close();
  });
});
