/**
 * A small MCP server (SDK v2) protected by @mcp-auth-kit/resource-server: `echo` needs
 * `notes:read`, `add_note` needs `notes:write` (asked for by step-up).
 */
import { createResourceServer } from '@mcp-auth-kit/resource-server';
import { createMcpExpressApp } from '@modelcontextprotocol/express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer, type AuthInfo } from '@modelcontextprotocol/server';
import type { Express, Request, Response } from 'express';
import * as z from 'zod';

export interface ProtectedMcpServerOptions {
  /** Issuer of the authorization server whose tokens are accepted. */
  issuer: string;
  /** Canonical resource URI of the MCP endpoint, e.g. `https://mcp.example.com/mcp`. */
  resource: string;
  /** Scopes each tool needs beyond the basic `notes:read` (default: add_note → notes:write). */
  toolScopes?: Record<string, string[]>;
  /** Leeway in seconds for `exp` (default 30; tests that check expiry use 0). */
  clockTolerance?: number;
}

export interface ProtectedMcpServer {
  app: Express;
  close(): Promise<void>;
}

function buildMcpServer(notes: Map<string, string[]>): McpServer {
  const server = new McpServer({ name: 'protected-example', version: '0.1.0' }, { capabilities: { tools: {} } });
  const subject = (auth: AuthInfo | undefined) => String(auth?.extra?.sub ?? 'anonymous');
  server.registerTool('whoami', { description: 'Who the token belongs to' }, (ctx) => ({
    content: [{ type: 'text', text: subject(ctx.http?.authInfo) }],
  }));
  server.registerTool(
    'add_note',
    { description: 'Stores a note (needs notes:write)', inputSchema: z.object({ text: z.string().min(1) }) },
    ({ text }, ctx) => {
      const sub = subject(ctx.http?.authInfo);
      notes.set(sub, [...(notes.get(sub) ?? []), text]);
      return { content: [{ type: 'text', text: `saved ${notes.get(sub)!.length}` }] };
    },
  );
  return server;
}

export function createProtectedMcpServer(options: ProtectedMcpServerOptions): ProtectedMcpServer {
  const resourceUrl = new URL(options.resource);
  const rs = createResourceServer({
    resource: options.resource,
    authorizationServers: [options.issuer],
    scopesSupported: ['notes:read'],
    scopePolicy: { default: ['notes:read'], tools: options.toolScopes ?? { add_note: ['notes:write'] } },
    scopeHierarchy: { 'notes:write': ['notes:read'] },
    clockTolerance: options.clockTolerance,
  });
  const notes = new Map<string, string[]>();
  const mcp = createMcpHandler(() => buildMcpServer(notes), { legacy: 'stateless' });
  const handle = toNodeHandler(mcp);

  const app = createMcpExpressApp({ host: resourceUrl.hostname });
  app.use(rs.metadataHandler);
  app.all(resourceUrl.pathname, rs.protect, (req: Request, res: Response) => void handle(req, res, req.body));
  return {
    app,
    async close() {
      await mcp.close();
      await rs.close();
    },
  };
}
