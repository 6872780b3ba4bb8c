// Type-checked by `tsc -p .` (nodenext, skipLibCheck: false): every package's published
// declarations compile in a user's project on express 4 types, and req.auth is typed.
import express, { type Request, type Response } from 'express';
import {
  createAuthorizationServer,
  openStore,
  StorageError,
  type AuthorizationServer,
  type AuthorizationServerConfig,
  type Store,
} from '@mcp-auth-kit/authorization-server';
import { createResourceServer, type McpAuthInfo } from '@mcp-auth-kit/resource-server';
import { McpAuthClient, MemoryStore, createAuthFetch, type McpAuthClientOptions } from '@mcp-auth-kit/client';
import { callTool, startTestAuthorizationServer, type TestAuthorizationServer } from '@mcp-auth-kit/testing';

const rs = createResourceServer({
  resource: 'http://127.0.0.1:3000/mcp',
  authorizationServers: ['http://127.0.0.1:9000'],
});
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

export async function memoryStore(): Promise<Store | StorageError> {
  return openStore({ kind: 'memory' }).catch((error: unknown) => (error instanceof StorageError ? error : Promise.reject(error)));
}

const options: McpAuthClientOptions = { clientName: 'typed host', store: new MemoryStore() };
export const authFetch = createAuthFetch(new McpAuthClient(options));

export async function kit(): Promise<number> {
  const as: TestAuthorizationServer = await startTestAuthorizationServer({ resources: { 'http://127.0.0.1:3000/mcp': ['notes:read'] } });
  const res = await callTool('http://127.0.0.1:3000/mcp', { token: await as.issueAccessToken(), name: 'whoami' });
  await as.close();
  return res.status;
}
