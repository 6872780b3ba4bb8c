// A loopback MCP server built with the real SDK v2 (`createMcpHandler`: the 2026-07-28 wire and the
// stateless 2025-11-25 one) behind a bearer check against a fake AS's tokens, recording every
// JSON-RPC message it receives as it arrived, to see what a client declares on each wire.
import { createServer, type Server } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { FakeAs } from './fake-servers.js';
import { close, listen } from './harness.js';

export interface RecordingMcpServer {
  mcpUrl: string;
  /** Each POST body, parsed, in arrival order (batches as arrays). */
  received: unknown[];
  close(): Promise<void>;
}

export async function startRecordingMcpServer(as: FakeAs): Promise<RecordingMcpServer> {
  const http: Server = createServer();
  const base = await listen(http);
  const prm = `${base}/.well-known/oauth-protected-resource/mcp`;
  const received: unknown[] = [];
  const newServer = () => {
    const server = new McpServer({ name: 'recording', version: '1.0.0' });
    server.registerTool('ping', { description: 'answers pong' }, async () => ({ content: [{ type: 'text' as const, text: 'pong' }] }));
    return server;
  };
  const handler = toNodeHandler(createMcpHandler(newServer, { legacy: 'stateless' }));
  http.on('request', async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url!, base);
    if (url.href === prm) {
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [as.issuer], scopes_supported: ['basic'] }));
    }
    const auth = req.headers.authorization;
    if (!auth?.startsWith('Bearer ') || !as.tokens.has(auth.slice(7))) {
      return res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${prm}"` }).end();
    }
    const raw = Buffer.concat(chunks).toString();
    const parsed = raw ? (JSON.parse(raw) as unknown) : undefined;
    if (req.method === 'POST') received.push(parsed);
    return handler(req, res, parsed);
  });
  return { mcpUrl: `${base}/mcp`, received, close: () => close(http) };
}
