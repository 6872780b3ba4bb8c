import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { startResourceServer, type TestRs } from './harness.js';

/**
 * The test resource server (notes:read to call, notes:write for the "write" tool) answering
 * authorized requests with a fresh MCP SDK server from `mcpServer`, stateless, JSON responses.
 */
export function startMcpResourceServer(issuerOf: () => string, mcpServer: () => McpServer): Promise<TestRs> {
  return startResourceServer(issuerOf, {
    basicScope: 'notes:read',
    writeScope: 'notes:write',
    handler: async (req, res, body) => {
      const server = mcpServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close());
      await server.connect(transport);
      await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
    },
  });
}
