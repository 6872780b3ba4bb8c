import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpAuthClient, createAuthFetch } from '@mcp-auth-kit/client';

/**
 * Client-side SSRF (RFC 9728 §7.7; MCP security best practices §SSRF): a malicious MCP server
 * answers 401 with a `resource_metadata` URL pointing into the client's private network. With
 * `blockPrivateNetworks` our client refuses BEFORE connecting: the target listener (loopback
 * only) must see no connection at all, whichever spelling of loopback is used.
 */
describe('attack: malicious MCP server steering our client to private addresses', () => {
  let target: TcpServer;
  let targetPort: number;
  const sockets: Socket[] = [];
  let evil: Server;
  let evilUrl: string;
  let metadataUrl = '';
  let loopbackName: string | undefined;

  beforeAll(async () => {
    target = createTcpServer((s) => {
      sockets.push(s);
      s.destroy();
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    targetPort = (target.address() as AddressInfo).port;
    // The "MCP server" the user chose: it is allowed to be local, its metadata pointers are not.
    evil = createHttpServer((_req, res) => {
      res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${metadataUrl}"`, 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/mcp`;
    const name = hostname();
    const answers = await lookup(name, { all: true }).catch(() => []);
    if (answers.length > 0 && answers.every((a) => a.address.startsWith('127.') || a.address === '::1')) loopbackName = name;
  });
  afterAll(() => {
    target?.close();
    evil?.closeAllConnections();
    evil?.close();
  });

  const attempt = async (url: string, blockPrivateNetworks = true) => {
    metadataUrl = url;
    const auth = new McpAuthClient({ clientName: 'ssrf victim', blockPrivateNetworks, openAuthorizationUrl: async () => {} });
    const res = await createAuthFetch(auth)(evilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then(
      (r) => ({ status: r.status }),
      (error: Error) => ({ error }),
    );
    return res;
  };

  for (const spelling of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]', '2130706433', '0x7f.1', '[::1]']) {
    it(`resource_metadata on ${spelling} → refused before any connection`, async () => {
      const before = sockets.length;
      const result = await attempt(`http://${spelling}:${targetPort}/.well-known/oauth-protected-resource/mcp`);
      expect('error' in result).toBe(true);
      expect(String((result as { error: { code?: string } }).error.code)).toMatch(/URL_FORBIDDEN/);
      expect(sockets.length - before, `the client connected to ${spelling}`).toBe(0);
    });
  }

  it('baseline: without blockPrivateNetworks (desktop default) the same pointer IS fetched — the listener counts connections', async () => {
    const before = sockets.length;
    await attempt(`http://127.0.0.1:${targetPort}/.well-known/oauth-protected-resource/mcp`, false);
    expect(sockets.length - before).toBeGreaterThan(0);
  });

  it('resource_metadata on a NAME that resolves to loopback (/etc/hosts) → refused at resolution, no connection', async (ctx) => {
    if (!loopbackName) ctx.skip();
    const before = sockets.length;
    await attempt(`http://${loopbackName}:${targetPort}/.well-known/oauth-protected-resource/mcp`);
    expect(sockets.length - before).toBe(0);
  });
});
