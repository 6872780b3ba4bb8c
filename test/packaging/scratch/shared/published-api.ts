// The part of the scratch projects' type check that does not depend on their express or MCP SDK
// version (shared/ is copied into each project; its types.ts imports this file, so `tsc -p .`
// checks it against that project's dependencies): resource server, storage, client, testing kit.
import { openStore, StorageError, type Store } from '@mcp-auth-kit/authorization-server';
import { createResourceServer } from '@mcp-auth-kit/resource-server';
import { McpAuthClient, MemoryStore, createAuthFetch, type McpAuthClientOptions } from '@mcp-auth-kit/client';
import { callTool, startTestAuthorizationServer, type TestAuthorizationServer } from '@mcp-auth-kit/testing';

export const rs = createResourceServer({
  resource: 'http://127.0.0.1:3000/mcp',
  authorizationServers: ['http://127.0.0.1:9000'],
});

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
