import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport as TransportV1 } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as ClientTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { advertiseAuthExtensions, authExtensionCapabilities } from '../src/core.js';

/**
 * advertiseAuthExtensions (spec/extensions/auth-overview.mdx: servers advertise their extensions
 * in the capabilities of `server/discover`; auth-oauth-client-credentials.mdx "Advertise support"):
 * one call on an SDK v2 or v1 server, read back by the SDK clients over loopback HTTP, on the
 * 2026-07-28 wire (`server/discover`) and the 2025-11-25 wire (`initialize`).
 */
const CC = 'io.modelcontextprotocol/oauth-client-credentials';
const EMA = 'io.modelcontextprotocol/enterprise-managed-authorization';
const INFO = { name: 'extensions-test', version: '1.0.0' };

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

describe('authExtensionCapabilities()', () => {
  it('names each chosen extension with an empty settings object, nothing else', () => {
    expect(authExtensionCapabilities({ clientCredentials: true, enterpriseManagedAuthorization: true })).toEqual({
      extensions: { [CC]: {}, [EMA]: {} },
    });
    expect(authExtensionCapabilities({ clientCredentials: true })).toEqual({ extensions: { [CC]: {} } });
    expect(authExtensionCapabilities({})).toEqual({ extensions: {} });
  });

  it('advertiseAuthExtensions() refuses something that takes no capabilities (TypeError), and keeps other capabilities', () => {
    expect(() => advertiseAuthExtensions({} as never, { clientCredentials: true })).toThrow(TypeError);
    const registered: unknown[] = [];
    advertiseAuthExtensions({ registerCapabilities: (c) => registered.push(c) }, { enterpriseManagedAuthorization: true });
    advertiseAuthExtensions({ registerCapabilities: (c) => registered.push(c) }, {});
    expect(registered).toEqual([{ extensions: { [EMA]: {} } }]);
  });
});

describe('SDK v2 server (@modelcontextprotocol/server) with advertiseAuthExtensions', () => {
  let http: { server: Server; url: string };
  beforeAll(async () => {
    const handler = createMcpHandler(
      () => {
        const server = new McpServer(INFO, { capabilities: { tools: { listChanged: false } } });
        advertiseAuthExtensions(server, { clientCredentials: true, enterpriseManagedAuthorization: true });
        return server;
      },
      { legacy: 'stateless' },
    );
    http = await listen(toNodeHandler(handler) as never);
  });
  afterAll(() => {
    http?.server.closeAllConnections();
    http?.server.close();
  });

  it.each([
    ['2026-07-28 (server/discover)', { versionNegotiation: { mode: { pin: '2026-07-28' } } }],
    ['2025-11-25 (initialize)', {}],
  ])('the SDK v2 client reads both extensions on the %s wire; tools stay advertised', async (_wire, options) => {
    const client = new Client({ name: 'reader', version: '1.0.0' }, options as never);
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    const capabilities = client.getServerCapabilities();
    await client.close();
    expect(capabilities?.extensions).toEqual({ [CC]: {}, [EMA]: {} });
    expect(capabilities?.tools).toBeDefined();
  });
});

describe('SDK v1 server (@modelcontextprotocol/sdk) with advertiseAuthExtensions', () => {
  let http: { server: Server; url: string };
  beforeAll(async () => {
    http = await listen(async (req, res) => {
      const server = new McpServerV1(INFO, { capabilities: { tools: {} } });
      advertiseAuthExtensions(server, { clientCredentials: true });
      const transport = new TransportV1({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
  });
  afterAll(() => {
    http?.server.closeAllConnections();
    http?.server.close();
  });

  it('the SDK v1 client reads the extension in the initialize result', async () => {
    const client = new ClientV1({ name: 'reader', version: '1.0.0' });
    await client.connect(new ClientTransportV1(new URL(http.url)));
    const capabilities = client.getServerCapabilities() as { extensions?: unknown } | undefined;
    await client.close();
    expect(capabilities?.extensions).toEqual({ [CC]: {} });
  });
});
