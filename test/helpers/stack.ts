import { startAuthServer } from '@mcp-auth-kit/auth-server';
import { startDemoServer } from '@mcp-auth-kit/demo-mcp-server';
import type { AuthorizationServerConfig, DpopConfig } from '@mcp-auth-kit/authorization-server';
import type { DpopOptions } from '@mcp-auth-kit/resource-server';
import { freePort } from '@mcp-auth-kit/test-utils';
import { sharedForSuite } from './suite.js';

export interface DemoStack {
  issuer: string;
  /** The MCP endpoint, also the canonical resource URI. */
  mcpUrl: string;
  close(): Promise<void>;
}

export interface DemoStackOptions {
  devAutoLogin?: string;
  /** RFC 9449 at the AS (`dpop` config: nonces, requireNonce). Default: the AS defaults. */
  asDpop?: DpopConfig;
  /** RFC 9449 at the demo MCP server. Default: the demo's (DPoP and Bearer accepted). */
  mcpDpop?: boolean | DpopOptions;
  /** More AS settings (e.g. `clients`, `idJag`); the resource is set by the stack. */
  asConfig?: (resource: string) => Partial<Omit<AuthorizationServerConfig, 'issuer' | 'storage'>>;
  /** The demo drive tool (issue 41): the drive's API and the MCP server's client at the AS. */
  drive?: { api: string; clientId: string; clientSecret: string };
  /** The authorization extensions the demo advertises in server/discover (default: the demo's). */
  authExtensions?: { clientCredentials?: boolean; enterpriseManagedAuthorization?: boolean };
}

/**
 * The demo stack of the runtime contract on ephemeral loopback ports: our AS (memory
 * storage, DEV_AUTO_LOGIN) and the demo MCP server protected by our middleware.
 */
export async function startDemoStack(options: DemoStackOptions = {}): Promise<DemoStack> {
  const mcpPort = await freePort();
  const resource = `http://localhost:${mcpPort}/mcp`;
  const as = await startAuthServer({
    port: 0,
    host: '127.0.0.1',
    resource,
    devAutoLogin: options.devAutoLogin ?? 'demo',
    storage: { kind: 'memory' },
    authorizationServer: {
      ...options.asConfig?.(resource),
      ...(options.asDpop !== undefined && { dpop: options.asDpop }),
    },
  });
  const mcp = await startDemoServer({
    port: mcpPort,
    host: '127.0.0.1',
    resource,
    issuer: as.issuer,
    ...(options.mcpDpop !== undefined && { dpop: options.mcpDpop }),
    ...(options.drive && { drive: options.drive }),
    ...(options.authExtensions && { authExtensions: options.authExtensions }),
  });
  return {
    issuer: as.issuer,
    mcpUrl: mcp.url,
    async close() {
      await mcp.close();
      await as.close();
    },
  };
}

/**
 * The demo stack of a describe block: started before its tests, closed after them. Options given
 * as a function are read when it starts (for values an earlier `beforeAll` made).
 */
export function useDemoStack(options: DemoStackOptions | (() => DemoStackOptions) = {}): DemoStack {
  return sharedForSuite(() => startDemoStack(typeof options === 'function' ? options() : options));
}
