// express 5 + MCP SDK v2 (@modelcontextprotocol/server, /node, /express) behind
// @mcp-auth-kit/resource-server.
import { createResourceServer } from '@mcp-auth-kit/resource-server';
import { resourceServerOptions } from './resource-server-options.mjs';
import { createMcpExpressApp } from '@modelcontextprotocol/express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

function buildMcpServer() {
  const server = new McpServer({ name: 'scratch-express5-sdk2', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('whoami', { description: 'Who the token belongs to' }, (ctx) => ({
    content: [{ type: 'text', text: JSON.stringify({ sub: ctx.http?.authInfo?.extra?.sub, scopes: ctx.http?.authInfo?.scopes }) }],
  }));
  server.registerTool('add_note', { description: 'Needs notes:write', inputSchema: z.object({ text: z.string().min(1) }) }, ({ text }) => ({
    content: [{ type: 'text', text: `saved ${text}` }],
  }));
  return server;
}

export function createApp({ issuer, resource }) {
  const rs = createResourceServer(resourceServerOptions({ issuer, resource }));
  const mcp = createMcpHandler(buildMcpServer, { legacy: 'stateless' });
  const handle = toNodeHandler(mcp);
  const app = createMcpExpressApp({ host: new URL(resource).hostname });
  app.use(rs.metadataHandler);
  app.all('/mcp', rs.protect, (req, res) => void handle(req, res, req.body)); // req.auth → ctx.http.authInfo
  return {
    app,
    async close() {
      await mcp.close();
      await rs.close();
    },
  };
}
