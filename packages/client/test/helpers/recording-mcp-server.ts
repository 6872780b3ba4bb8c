// A loopback MCP server built with the real SDK v2 (`createMcpHandler`: the 2026-07-28 wire and the
// stateless 2025-11-25 one) behind a bearer check against a fake AS's tokens, recording every
// JSON-RPC message it receives as it arrived, to see what a client declares on each wire.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { type FakeAs, readOrServePrm } from './fake-servers.js';
import { close, listen } from './harness.js';

export interface RecordingMcpServer {
  mcpUrl: string;
  /** Each POST body, parsed, in arrival order (batches as arrays). */
  received: unknown[];
  /** The status of each answer to a POST with a valid token, in order. */
  statuses: number[];
  close(): Promise<void>;
}

/**
 * Which revisions the server speaks: `both` (SDK v2 `createMcpHandler`, stateless 2025 fallback),
 * `2026-07-28` only (`legacy: 'reject'`), or `2025-11-25` only (SDK v1, stateful sessions).
 */
export type Wires = 'both' | '2026-07-28' | '2025-11-25';

export async function startRecordingMcpServer(as: FakeAs, wires: Wires = 'both'): Promise<RecordingMcpServer> {
  const http: Server = createServer();
  const base = await listen(http);
  const prm = `${base}/.well-known/oauth-protected-resource/mcp`;
  const received: unknown[] = [];
  const newServer = () => {
    const server = new McpServer({ name: 'recording', version: '1.0.0' });
    server.registerTool('ping', { description: 'answers pong' }, async () => ({ content: [{ type: 'text' as const, text: 'pong' }] }));
    return server;
  };
  const handler =
    wires === '2025-11-25'
      ? v1Handler()
      : toNodeHandler(createMcpHandler(newServer, { legacy: wires === 'both' ? 'stateless' : 'reject' }));
  const statuses: number[] = [];
  http.on('request', async (req, res) => {
    const body = await readOrServePrm(req, res, base, as.issuer);
    if (body === undefined) return undefined;
    const auth = req.headers.authorization;
    if (!auth?.startsWith('Bearer ') || !as.tokens.has(auth.slice(7))) {
      return res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${prm}"` }).end();
    }
    const raw = body.toString();
    const parsed = raw ? (JSON.parse(raw) as unknown) : undefined;
    if (req.method === 'POST') {
      received.push(parsed);
      res.on('finish', () => statuses.push(res.statusCode));
    }
    return handler(req, res, parsed);
  });
  return { mcpUrl: `${base}/mcp`, received, statuses, close: () => close(http) };
}

/** SDK v1 (`@modelcontextprotocol/sdk`) with stateful sessions: the 2025-11-25 wire only. */
function v1Handler() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  return async (req: IncomingMessage, res: ServerResponse, parsed: unknown) => {
    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (known) return known.handleRequest(req, res, parsed);
    if (req.method !== 'POST') return void res.writeHead(400).end();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    const server = new McpServerV1({ name: 'recording-v1', version: '1.0.0' });
    server.registerTool('ping', { description: 'answers pong' }, async () => ({ content: [{ type: 'text' as const, text: 'pong' }] }));
    await server.connect(transport);
    return transport.handleRequest(req, res, parsed);
  };
}
