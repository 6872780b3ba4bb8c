// drive-tool.test.ts: an MCP SDK v2 server's tool that lists the user's files at a third-party
// "drive" through our authorization server's token vault, tested end to end: the kit plays the
// drive (an OAuth 2 provider with a file API) and the user (who connects it on the URL
// elicitation's page). In your project the server part lives in your source.
import { randomBytes } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { createResourceServer, thirdPartyToken, withThirdPartyAuthorization } from '@mcp-auth-kit/resource-server';
import {
  callTool, completeUrlElicitation, startLoopbackServer, startTestAuthorizationServer, startThirdPartyProvider,
  type LoopbackServer, type TestAuthorizationServer, type ThirdPartyProvider,
} from '@mcp-auth-kit/testing';

// ---- The server under test ----
function createFilesServer(driveApi: string): McpServer {
  const server = new McpServer({ name: 'files', version: '1.0.0' });
  server.registerTool(
    'drive_list_files',
    { description: "Lists the user's Drive files" },
    withThirdPartyAuthorization(async (ctx) => {
      // The drive's token for this user, from the AS's vault: never the MCP token itself.
      const token = await thirdPartyToken(ctx.http?.authInfo, 'drive', { signal: ctx.mcpReq.signal });
      const res = await fetch(`${driveApi}/files`, { headers: { authorization: `Bearer ${token}` } });
      const { files } = (await res.json()) as { files: { name: string }[] };
      return { content: [{ type: 'text', text: files.map((f) => f.name).join('\n') }] };
    }),
  );
  return server;
}

function createApp(options: { issuer: string; resource: string; client: { id: string; secret: string }; driveApi: string }) {
  const rs = createResourceServer({
    resource: options.resource,
    authorizationServers: [options.issuer],
    scopesSupported: ['files:read'],
    thirdParty: { clientId: options.client.id, clientSecret: options.client.secret }, // this server's client at the AS
  });
  const mcp = createMcpHandler(() => createFilesServer(options.driveApi), { legacy: 'stateless' });
  const handle = toNodeHandler(mcp);
  const app = express();
  app.use(rs.metadataHandler);
  app.all(new URL(options.resource).pathname, rs.protect, (req: Request, res: Response) => void handle(req, res, req.body));
  return {
    app,
    async close() {
      await mcp.close();
      await rs.close();
    },
  };
}

// ---- The test ----
const urlElicitation = { elicitation: { url: {} } }; // what the MCP client declares it can do
const mcpClient = { id: 'files-mcp-server', secret: randomBytes(18).toString('base64url') }; // the MCP server at the AS
const vaultClient = { clientId: 'mcp-auth-kit', clientSecret: randomBytes(18).toString('base64url') }; // the AS at the drive
const alice = {
  authServer: { username: 'alice', password: 'alice-password-1' }, // the MCP user at our AS
  provider: { username: 'alice-drive', password: 'drive-password-1' }, // the same person at the drive
};
let drive: ThirdPartyProvider;
let listener: LoopbackServer;
let as: TestAuthorizationServer;
let server: ReturnType<typeof createApp>;
let resource: string;

beforeAll(async () => {
  drive = await startThirdPartyProvider({ users: [{ ...alice.provider, files: [{ name: 'q3.xlsx' }, { name: 'plan.md' }] }] });
  listener = await startLoopbackServer(); // port first: the resource URI contains it
  resource = `${listener.origin}/mcp`;
  as = await startTestAuthorizationServer({
    resources: { [resource]: ['files:read'] },
    users: [alice.authServer],
    autoLogin: false, // the connect page signs alice in on the real login page
    clients: [
      {
        client_id: mcpClient.id,
        client_secret: mcpClient.secret,
        resource, // the MCP server this client is: it may exchange its users' tokens
        grant_types: ['urn:ietf:params:oauth:grant-type:token-exchange'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    config: {
      thirdParty: {
        encryptionKey: randomBytes(32).toString('base64url'),
        providers: {
          drive: { issuer: drive.issuer, ...vaultClient, scopes: ['files.read'], resources: [resource], displayName: 'Drive' },
        },
      },
    },
  });
  drive.registerClient({ ...vaultClient, redirectUris: [`${as.issuer}/connect/callback`] }); // the AS's connect callback
  server = createApp({ issuer: as.issuer, resource, client: mcpClient, driveApi: drive.apiBase });
  listener.handle(server.app);
});
afterAll(async () => {
  await server?.close();
  await listener?.close();
  await as?.close();
  await drive?.close();
});

it('2025-11-25: a URL elicitation (-32042); once alice connected her drive, the retried call lists her files', async () => {
  const token = await as.issueAccessToken({ resource, subject: 'alice' });
  const call = () => callTool(resource, { token, name: 'drive_list_files', capabilities: urlElicitation, protocolVersion: '2025-11-25' });
  const first = await call();
  expect(first.body.error.code).toBe(-32042); // URL elicitation required
  const [elicitation] = first.body.error.data.elicitations;
  expect(elicitation).toMatchObject({ mode: 'url', message: 'Connect your Drive account to continue' });

  await completeUrlElicitation(elicitation.url, alice); // what alice does in her browser
  const second = await call();
  expect(second.body.result.content[0].text).toBe('q3.xlsx\nplan.md');
  expect(drive.requestsContaining(token)).toEqual([]); // the MCP token never reached the third party
});

it('2026-07-28: an InputRequiredResult with the URL elicitation; after a disconnect the tool asks again', async () => {
  await as.store.connections.deleteAccount('alice'); // alice disconnects the drive (account page)
  const token = await as.issueAccessToken({ resource, subject: 'alice' });
  const call = () => callTool(resource, { token, name: 'drive_list_files', capabilities: urlElicitation });
  const first = await call();
  expect(first.body.result.resultType).toBe('input_required');
  const { params } = first.body.result.inputRequests.connect_drive; // an elicitation/create request
  expect(params).toMatchObject({ mode: 'url', message: 'Connect your Drive account to continue' });

  await completeUrlElicitation(params.url, alice);
  const second = await call(); // a new request: the tool finds the connection
  expect(second.body.result.content[0].text).toBe('q3.xlsx\nplan.md');
});
