import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { assertAuthExtensions, discoverExtensions, ResponseAssertionError } from '../src/index.js';

/**
 * assertAuthExtensions / discoverExtensions (spec/extensions/auth-overview.mdx: servers advertise
 * the extensions in the capabilities of `server/discover`): against SDK v2 servers over loopback
 * HTTP, one advertising the client credentials extension and another extension, one advertising none.
 */
const CC = 'io.modelcontextprotocol/oauth-client-credentials';
const EMA = 'io.modelcontextprotocol/enterprise-managed-authorization';

async function serve(extensions: Record<string, Record<string, number>> | undefined): Promise<{ server: Server; url: string }> {
  const handler = createMcpHandler(
    () => new McpServer({ name: 'kit-test', version: '1.0.0' }, { capabilities: { tools: {}, ...(extensions && { extensions }) } }),
    { legacy: 'stateless' },
  );
  const server = createServer(toNodeHandler(handler) as never);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

describe('assertAuthExtensions()', () => {
  let advertising: { server: Server; url: string };
  let silent: { server: Server; url: string };
  beforeAll(async () => {
    advertising = await serve({ [CC]: {}, 'com.example/other': { x: 1 } });
    silent = await serve(undefined);
  });
  afterAll(() => {
    for (const s of [advertising, silent]) {
      s?.server.closeAllConnections();
      s?.server.close();
    }
  });

  it('discoverExtensions() lists every identifier of capabilities.extensions', async () => {
    const { extensions, response } = await discoverExtensions(advertising.url);
    expect(response.status).toBe(200);
    expect(extensions.sort()).toEqual(['com.example/other', CC].sort());
    expect((await discoverExtensions(silent.url)).extensions).toEqual([]);
  });

  it('passes when exactly the expected authorization extensions are advertised (others ignored)', async () => {
    await expect(assertAuthExtensions(advertising.url, [CC])).resolves.toMatchObject({ extensions: expect.arrayContaining([CC]) });
    await expect(assertAuthExtensions(silent.url, [])).resolves.toBeDefined();
  });

  it('fails with the response when one is missing or one too many is advertised', async () => {
    const missing = assertAuthExtensions(advertising.url, [CC, EMA]);
    await expect(missing).rejects.toBeInstanceOf(ResponseAssertionError);
    await expect(assertAuthExtensions(advertising.url, [CC, EMA])).rejects.toThrow(
      /got \[io\.modelcontextprotocol\/oauth-client-credentials\]/,
    );
    await expect(assertAuthExtensions(advertising.url, [])).rejects.toThrow(/Expected the authorization extensions \[\]/);
    await expect(assertAuthExtensions(silent.url, [CC])).rejects.toThrow(/HTTP 200/);
  });

  it('fails when the server gives no server/discover result', async () => {
    await expect(assertAuthExtensions('http://127.0.0.1:1/mcp', [CC])).rejects.toThrow();
  });
});
