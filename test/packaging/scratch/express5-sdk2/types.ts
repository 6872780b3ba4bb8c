// Type-checked by `tsc -p .` (nodenext, skipLibCheck: false): every package's published
// declarations compile in a user's project on express 5 types next to the MCP SDK v2 express
// package (whose own req.auth augmentation must merge with ours). The CLI (@mcp-auth-kit/cli) is
// a command without an API: the scratch-project test runs its installed bin.
import express, { type Request, type Response } from 'express';
import { createAuthorizationServer, type AuthorizationServer, type AuthorizationServerConfig } from '@mcp-auth-kit/authorization-server';
import type { McpAuthInfo } from '@mcp-auth-kit/resource-server';
import { createMcpExpressApp } from '@modelcontextprotocol/express';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { rs } from './published-api.js';

export { authFetch, kit, memoryStore } from './published-api.js';

const app = createMcpExpressApp({ host: '127.0.0.1' });
app.use(express.json());
app.use(rs.metadataHandler);
app.post('/mcp', rs.protect, (req: Request, res: Response) => {
  const auth: McpAuthInfo | undefined = req.auth; // set by rs.protect, typed by the augmentation
  const sdkAuth: AuthInfo | undefined = req.auth; // the SDK's own view of the same member
  if (sdkAuth?.resourceMetadataUrl) res.set('x-prm', sdkAuth.resourceMetadataUrl);
  res.json({ clientId: auth?.clientId, scopes: auth?.scopes.join(' '), sub: auth?.extra?.sub });
});

export async function startAs(config: AuthorizationServerConfig): Promise<AuthorizationServer> {
  const as = await createAuthorizationServer(config);
  app.use(as.app);
  return as;
}
