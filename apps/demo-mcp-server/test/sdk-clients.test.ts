import { Client as ClientV2, InsufficientScopeError, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoServer, type DemoServer } from '../src/index.js';
import { startFakeAuthorizationServer, type FakeAuthorizationServer } from './helpers/fake-as.js';

// Interop: the official MCP SDK clients, v2 (@modelcontextprotocol/client 2.4.0) on both wires
// and v1 (@modelcontextprotocol/sdk 1.32.2, 2025-11-25 wire), with a static bearer token.
let as: FakeAuthorizationServer;
let demo: DemoServer;

beforeAll(async () => {
  as = await startFakeAuthorizationServer();
  demo = await startDemoServer({ port: 0, host: '127.0.0.1', issuer: as.issuer });
});

afterAll(async () => {
  await demo?.close();
  await as?.close();
});

const TOOL_NAMES = ['add_note', 'list_notes', 'whoami'];

interface ToolClient {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

function structured(result: unknown): any {
  return (result as { structuredContent?: unknown }).structuredContent;
}

/** A static bearer token in every request's headers. */
const bearerHeaders = (token: string) => ({ requestInit: { headers: { authorization: `Bearer ${token}` } } });

/** An SDK v2 client connected to the demo endpoint. */
async function connectV2(
  name: string,
  transport: ConstructorParameters<typeof TransportV2>[1],
  options?: ConstructorParameters<typeof ClientV2>[1],
): Promise<{ client: ToolClient; era: () => string | undefined }> {
  const client = new ClientV2({ name, version: '1.0.0' }, options);
  await client.connect(new TransportV2(new URL(demo.url), transport));
  return { client: client as unknown as ToolClient, era: () => client.getProtocolEra() };
}

const clients: Array<{
  name: string;
  sdk: 'v1' | 'v2';
  era: 'legacy' | 'modern';
  connect(token: string): Promise<{ client: ToolClient; era: () => string | undefined }>;
}> = [
  {
    name: 'SDK v2 client, 2025-11-25 wire (initialize)',
    sdk: 'v2',
    era: 'legacy',
    connect: (token) => connectV2('interop-v2-legacy', bearerHeaders(token)),
  },
  {
    name: 'SDK v2 client, 2026-07-28 wire (stateless, pinned)',
    sdk: 'v2',
    era: 'modern',
    connect: (token) =>
      connectV2(
        'interop-v2-modern',
        { authProvider: { token: async () => token } },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      ),
  },
  {
    name: 'SDK v2 client, auto negotiation picks 2026-07-28',
    sdk: 'v2',
    era: 'modern',
    connect: (token) => connectV2('interop-v2-auto', bearerHeaders(token), { versionNegotiation: { mode: 'auto' } }),
  },
  {
    name: 'SDK v1 client, 2025-11-25 wire (initialize)',
    sdk: 'v1',
    era: 'legacy',
    async connect(token) {
      const client = new ClientV1({ name: 'interop-v1', version: '1.0.0' });
      await client.connect(new TransportV1(new URL(demo.url), bearerHeaders(token)));
      return {
        client: client as unknown as ToolClient,
        era: () => (client.getServerVersion() ? 'legacy' : undefined),
      };
    },
  },
];

describe.each(clients)('$name', ({ connect, era, sdk }) => {
  it('connects on the expected wire, lists the tools in order and calls whoami', async () => {
    const sub = `whoami-${era}`;
    const { client, era: negotiated } = await connect(await as.sign({ aud: demo.resource, sub, scope: 'notes:read' }));
    try {
      expect(negotiated()).toBe(era);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
      const who = structured(await client.callTool({ name: 'whoami', arguments: {} }));
      expect(who).toMatchObject({ sub, client_id: 'test-client', scopes: ['notes:read'] });
    } finally {
      await client.close();
    }
  });

  it('add_note with only notes:read is refused (403 insufficient_scope reaches the client)', async () => {
    const { client } = await connect(await as.sign({ aud: demo.resource, scope: 'notes:read' }));
    try {
      const attempt = client.callTool({ name: 'add_note', arguments: { text: 'refused' } });
      await expect(attempt).rejects.toThrow();
      const error = await attempt.catch((e: unknown) => e);
      if (sdk === 'v2') {
        // SDK v2 parses the challenge into a typed error (step-up is left to an OAuth provider).
        expect(error).toBeInstanceOf(InsufficientScopeError);
        expect((error as InsufficientScopeError).requiredScope?.split(' ')).toContain('notes:write');
        expect((error as InsufficientScopeError).resourceMetadataUrl?.href).toBe(
          `${new URL(demo.resource).origin}/.well-known/oauth-protected-resource/mcp`,
        );
      } else {
        // SDK v1 without an auth provider surfaces the 403 as an HTTP error with the status.
        expect((error as { code?: number }).code).toBe(403);
        expect((error as Error).message).toContain('insufficient_scope');
      }
    } finally {
      await client.close();
    }
  });

  it('with notes:write, add_note then list_notes shows the note', async () => {
    const sub = `writer-${Math.random().toString(36).slice(2)}`;
    const { client } = await connect(await as.sign({ aud: demo.resource, sub, scope: 'notes:read notes:write' }));
    try {
      const added = structured(await client.callTool({ name: 'add_note', arguments: { text: `hello from ${sub}` } }));
      expect(added.note.text).toBe(`hello from ${sub}`);
      const listed = structured(await client.callTool({ name: 'list_notes', arguments: {} }));
      expect(listed.notes.map((n: { text: string }) => n.text)).toEqual([`hello from ${sub}`]);
    } finally {
      await client.close();
    }
  });
});
