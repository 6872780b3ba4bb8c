import { startAuthServer } from '@mcp-auth-kit/auth-server';
import { startDemoServer } from '@mcp-auth-kit/demo-mcp-server';
import { freePort } from './ports.js';

export interface DemoStack {
  issuer: string;
  /** The MCP endpoint, also the canonical resource URI. */
  mcpUrl: string;
  close(): Promise<void>;
}

/**
 * The demo stack of the runtime contract on ephemeral loopback ports: our AS (memory
 * storage, DEV_AUTO_LOGIN) and the demo MCP server protected by our middleware.
 */
export async function startDemoStack(options: { devAutoLogin?: string } = {}): Promise<DemoStack> {
  const mcpPort = await freePort();
  const resource = `http://localhost:${mcpPort}/mcp`;
  const as = await startAuthServer({
    port: 0,
    host: '127.0.0.1',
    resource,
    devAutoLogin: options.devAutoLogin ?? 'demo',
    storage: { kind: 'memory' },
  });
  const mcp = await startDemoServer({ port: mcpPort, host: '127.0.0.1', resource, issuer: as.issuer });
  return {
    issuer: as.issuer,
    mcpUrl: mcp.url,
    async close() {
      await mcp.close();
      await as.close();
    },
  };
}
