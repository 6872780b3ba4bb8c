// Type-checked by `tsc -p .` (nodenext, skipLibCheck: false): every package's published
// declarations compile in a user's project on express 4 types, and req.auth is typed.
import express, { type Request, type Response } from 'express';
import { createAuthorizationServer, type AuthorizationServer, type AuthorizationServerConfig } from '@mcp-auth-kit/authorization-server';
import type { McpAuthInfo } from '@mcp-auth-kit/resource-server';
import { rs } from './published-api.js';

export { authFetch, kit, memoryStore } from './published-api.js';

const app = express();
app.use(express.json());
app.use(rs.metadataHandler);
app.post('/mcp', rs.protect, (req: Request, res: Response) => {
  const auth: McpAuthInfo | undefined = req.auth; // set by rs.protect, typed by the augmentation
  res.json({ clientId: auth?.clientId, scopes: auth?.scopes.join(' '), sub: auth?.extra?.sub });
});

export async function startAs(config: AuthorizationServerConfig): Promise<AuthorizationServer> {
  const as = await createAuthorizationServer(config);
  app.use(as.app);
  return as;
}
