// express 4 + MCP SDK v1 (@modelcontextprotocol/sdk, StreamableHTTPServerTransport, stateless)
// behind @mcp-auth-kit/resource-server.
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createResourceServer } from '@mcp-auth-kit/resource-server';
import { resourceServerOptions } from './resource-server-options.mjs';
import { z } from 'zod';

function buildMcpServer() {
  const server = new McpServer({ name: 'scratch-express4-sdk1', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Who the token belongs to' }, (extra) => ({
    content: [{ type: 'text', text: JSON.stringify({ sub: extra.authInfo?.extra?.sub, scopes: extra.authInfo?.scopes }) }],
  }));
  server.registerTool('add_note', { description: 'Needs notes:write', inputSchema: { text: z.string().min(1) } }, ({ text }) => ({
    content: [{ type: 'text', text: `saved ${text}` }],
  }));
  return server;
}

export function createApp({ issuer, resource }) {
  const rs = createResourceServer(resourceServerOptions({ issuer, resource }));
  const app = express();
  app.use(express.json());
  app.use(rs.metadataHandler);
  app.post('/mcp', rs.protect, async (req, res) => {
    // express 4 does not catch a rejected promise: answer the error here
    try {
      const server = buildMcpServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body); // req.auth → extra.authInfo
    } catch (error) {
      if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: String(error) }, id: null });
    }
  });
  return { app, close: () => rs.close() };
}
