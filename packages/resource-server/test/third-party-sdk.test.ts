import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport as ServerTransportV1 } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer as McpServerV2, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2, type ElicitRequest } from '@modelcontextprotocol/client';
import { thirdPartyToken, withThirdPartyAuthorization, type ResourceServer, type ThirdPartyInputRequiredResult } from '../src/index.js';
import { signToken } from './helpers/harness.js';
import { FakeDrive, FakeExchangeIssuer, MCP_CLIENT, thirdPartyServer } from './helpers/third-party.js';

// Issue 41, RS side, on the wire: a tool calls a third-party API with `thirdPartyToken`; a user
// who has not connected the provider gets a URL-mode elicitation of the AS's connect page on the
// wire their client speaks (MCP 2025-11-25 client/elicitation "URL Elicitation Required Error"
// -32042; 2026-07-28 changelog items 7 and 11: InputRequiredResult with inputRequests and
// requestState, no elicitationId); after connecting, the retried call returns the user's data.
// Real SDK v1 and v2 servers over Streamable HTTP on loopback, real SDK v1 and v2 clients.

const MESSAGE = 'Connect your Drive account to continue';

let drive: FakeDrive;
let as: FakeExchangeIssuer;
let rs: ResourceServer;
let http: Server;
let base: string;
const logs: unknown[] = [];
/** Every MCP access token the tests used: none may reach the provider's API or a log. */
const mcpTokens: string[] = [];

/** The tools both SDK servers register: the callbacks are the same code for v1 and v2 but the context. */
function listFiles(
  authInfo: Parameters<typeof thirdPartyToken>[0],
  signal: AbortSignal,
): Promise<{ content: Array<{ type: 'text'; text: string }> }> {
  return thirdPartyToken(authInfo, 'drive', { signal }).then(async (token) => ({
    content: [{ type: 'text' as const, text: JSON.stringify(await drive.list(token)) }],
  }));
}

function v1Server(): McpServerV1 {
  const server = new McpServerV1({ name: 'files-v1', version: '1.0.0' });
  server.registerTool(
    'list_files',
    { description: "Lists the user's Drive files" },
    withThirdPartyAuthorization(async (extra) => listFiles(extra.authInfo, extra.signal)),
  );
  server.registerTool(
    'list_photos',
    { description: 'A provider this server may not use' },
    withThirdPartyAuthorization(async (extra) => {
      await thirdPartyToken(extra.authInfo, 'photos');
      return { content: [{ type: 'text', text: 'unreachable' }] };
    }),
  );
  return server;
}

function v2Server(): McpServerV2 {
  const server = new McpServerV2({ name: 'files-v2', version: '1.0.0' });
  server.registerTool(
    'list_files',
    { description: "Lists the user's Drive files" },
    withThirdPartyAuthorization(async (ctx) => listFiles(ctx.http?.authInfo, ctx.mcpReq.signal)),
  );
  server.registerTool(
    'list_photos',
    { description: 'A provider this server may not use' },
    withThirdPartyAuthorization(async (ctx) => {
      await thirdPartyToken(ctx.http?.authInfo, 'photos');
      return { content: [{ type: 'text', text: 'unreachable' }] };
    }),
  );
  return server;
}

beforeAll(async () => {
  drive = await new FakeDrive().start();
  as = await FakeExchangeIssuer.create(drive);
  as.providers.set('photos', { displayName: 'Photos', resources: ['http://localhost:4000/mcp'] });
  drive.files.set('alice', ['alice-notes.txt']);
  drive.files.set('bob', ['bob-budget.xlsx']);
  rs = thirdPartyServer(as, (m, d) => logs.push([m, d]));
  const app = express();
  app.post('/v1/mcp', rs.protect, async (req: Request, res: Response) => {
    const server = v1Server();
    const transport = new ServerTransportV1({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const v2 = toNodeHandler(createMcpHandler(() => v2Server(), { legacy: 'stateless' }));
  app.all('/v2/mcp', rs.protect, (req: Request, res: Response) => void v2(req, res, req.body));
  http = createServer(app);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await rs.close();
  await as.stop();
  await drive.stop();
});

async function mcpToken(sub: string): Promise<string> {
  const token = await signToken({ key: as.keys[0]!, issuer: as.issuer, claims: { sub } });
  mcpTokens.push(token);
  return token;
}

interface ToolClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text;

/** 2025-11-25 clients: the call fails with -32042 and its URL elicitation; the user connects; the retry answers. */
const legacyClients: Array<{ name: string; connect(path: string, token: string): Promise<ToolClient> }> = [
  {
    name: 'SDK v1 client',
    async connect(path, token) {
      const client = new ClientV1({ name: 'v1', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
      await client.connect(new TransportV1(new URL(`${base}${path}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client as unknown as ToolClient;
    },
  },
  {
    name: 'SDK v2 client (2025-11-25 wire)',
    async connect(path, token) {
      const client = new ClientV2({ name: 'v2-legacy', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
      await client.connect(new TransportV2(new URL(`${base}${path}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client as unknown as ToolClient;
    },
  },
];
const servers = [
  { name: 'SDK v1 McpServer', path: '/v1/mcp' },
  { name: 'SDK v2 McpServer', path: '/v2/mcp' },
];

describe.each(servers)('$name', ({ path }) => {
  describe.each(legacyClients)('$name, 2025-11-25', ({ connect }) => {
    it('not connected: -32042 with one URL-mode elicitation of the connect page; after connecting the retried call returns the files', async () => {
      const sub = `alice`;
      as.disconnect(sub, 'drive');
      const token = await mcpToken(sub);
      const client = await connect(path, token);
      try {
        const error = (await client.callTool({ name: 'list_files', arguments: {} }).then(
          () => undefined,
          (e: unknown) => e,
        )) as { code?: number; message?: string; data?: { elicitations?: Array<Record<string, unknown>> } };
        expect(error?.code).toBe(-32042);
        expect(error.message).toContain(MESSAGE);
        const elicitations = error.data?.elicitations ?? [];
        expect(elicitations).toHaveLength(1);
        const [elicitation] = elicitations;
        expect(Object.keys(elicitation!).sort()).toEqual(['elicitationId', 'message', 'mode', 'url']);
        expect(elicitation).toMatchObject({ mode: 'url', message: MESSAGE });
        expect(elicitation!.elicitationId).toMatch(/^[0-9a-f-]{36}$/);
        expect(elicitation!.url).toMatch(new RegExp(`^${as.issuer}/connect/`));
        expect(JSON.stringify(error)).not.toContain(token);

        // the user opens the page and completes the flow (the client's part, out of band)
        expect((await fetch(elicitation!.url as string)).status).toBe(200);
        const files = await client.callTool({ name: 'list_files', arguments: {} });
        expect(JSON.parse(text(files))).toEqual(['alice-notes.txt']);
      } finally {
        await client.close();
      }
    });

    it('another refusal (a provider this server may not use) is a tool error without token material', async () => {
      const token = await mcpToken('bob');
      const client = await connect(path, token);
      try {
        const result = (await client.callTool({ name: 'list_photos', arguments: {} })) as { isError?: boolean };
        expect(result.isError).toBe(true);
        expect(text(result)).toBe('"photos" is not a provider this MCP server may use');
      } finally {
        await client.close();
      }
    });
  });
});

describe('SDK v2 McpServer, SDK v2 client on the 2026-07-28 wire (MRTR)', () => {
  async function modernClient(
    token: string,
    onUrl: (params: ElicitRequest['params']) => Promise<'accept' | 'decline' | 'cancel'>,
    autoFulfill = true,
  ) {
    const client = new ClientV2(
      { name: 'v2-modern', version: '1.0.0' },
      {
        capabilities: { elicitation: { url: {} } },
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        inputRequired: { autoFulfill },
      },
    );
    client.setRequestHandler('elicitation/create', async (request) => ({ action: await onUrl(request.params) }));
    await client.connect(new TransportV2(new URL(`${base}/v2/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  }

  it('the tool answers an InputRequiredResult: one URL-mode elicitation/create, no elicitationId, and a requestState', async () => {
    as.disconnect('bob', 'drive');
    const token = await mcpToken('bob');
    const client = await modernClient(token, async () => 'accept', false);
    try {
      expect(client.getProtocolEra()).toBe('modern');
      const result = (await client.callTool(
        { name: 'list_files', arguments: {} },
        { allowInputRequired: true },
      )) as unknown as ThirdPartyInputRequiredResult;
      expect(result.resultType).toBe('input_required');
      expect(Object.keys(result.inputRequests)).toEqual(['connect_drive']);
      const request = result.inputRequests.connect_drive!;
      expect(request.method).toBe('elicitation/create');
      expect(request.params).toEqual({ mode: 'url', message: MESSAGE, url: expect.stringMatching(new RegExp(`^${as.issuer}/connect/`)) });
      expect(typeof result.requestState).toBe('string');
      expect(JSON.stringify(result)).not.toContain(token);
    } finally {
      await client.close();
    }
  });

  it('the client fulfils the elicitation (the user connects), retries, and the tool answers with the files', async () => {
    as.disconnect('bob', 'drive');
    const token = await mcpToken('bob');
    const shown: Array<ElicitRequest['params']> = [];
    const client = await modernClient(token, async (params) => {
      shown.push(params);
      // the user opens the page and completes the flow before answering
      expect((await fetch((params as { url: string }).url)).status).toBe(200);
      return 'accept';
    });
    try {
      const files = await client.callTool({ name: 'list_files', arguments: {} });
      expect(JSON.parse(text(files))).toEqual(['bob-budget.xlsx']);
      expect(shown).toHaveLength(1);
      expect(shown[0]).toMatchObject({ mode: 'url', message: MESSAGE });
      // connected now: no elicitation on the next call
      await client.callTool({ name: 'list_files', arguments: {} });
      expect(shown).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('declined: the retry ends with a tool error (access_denied), the user is not asked again', async () => {
    as.disconnect('bob', 'drive');
    let asked = 0;
    const client = await modernClient(await mcpToken('bob'), async () => {
      asked += 1;
      return 'decline';
    });
    try {
      const result = (await client.callTool({ name: 'list_files', arguments: {} })) as { isError?: boolean };
      expect(result.isError).toBe(true);
      expect(text(result)).toBe('Your Drive account is not connected (the connect page was declined)');
      expect(asked).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe('what never leaves the MCP server', () => {
  it('the provider API saw only provider tokens, never an MCP access token; no log holds a token', () => {
    expect(mcpTokens.length).toBeGreaterThan(5);
    expect(drive.credentials.length).toBeGreaterThan(0);
    for (const credential of drive.credentials) {
      for (const token of mcpTokens) expect(credential).not.toContain(token);
    }
    // the MCP tokens went to the AS's token endpoint, as subject_token
    expect(as.exchanges.every((e) => mcpTokens.includes(e.form.subject_token!))).toBe(true);
    const logged = JSON.stringify(logs);
    for (const token of [...mcpTokens, ...drive.tokens.keys(), MCP_CLIENT.secret]) expect(logged).not.toContain(token);
  });
});
