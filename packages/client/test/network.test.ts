import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { assertPublicHost, isPrivateAddress } from '../src/core.js';
import { ERR, McpAuthClient } from '../src/index.js';
import { fakePairs } from './helpers/fake-pair.js';

const { pair } = fakePairs();

describe('SSRF protection (Security Best Practices: block private IP ranges, RFC 9728 §7.7)', () => {
  const PRIVATE = [
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '127.0.0.1',
    '127.255.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '[::1]',
    'not-an-ip',
  ];
  const PUBLIC = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8'];
  for (const ip of PRIVATE) it(`${ip} is private or reserved`, () => expect(isPrivateAddress(ip)).toBe(true));
  for (const ip of PUBLIC) it(`${ip} is public`, () => expect(isPrivateAddress(ip)).toBe(false));

  it('encoded IPv4 literals (hex, octal, integer) are normalised by the URL parser and still refused', async () => {
    for (const u of ['http://0x7f.0.0.1/', 'http://0177.0.0.1/', 'http://2130706433/', 'http://0xa9.0xfe.0xa9.0xfe/'])
      await expect(assertPublicHost(new URL(u), 'u', async () => expect.unreachable('no DNS for literals'))).rejects.toMatchObject({
        code: ERR.URL_FORBIDDEN,
      });
  });

  it('a hostname resolving to any private address is refused (DNS answered by a stub: no network)', async () => {
    await expect(
      assertPublicHost(new URL('https://metadata.example/'), 'u', async () => ['93.184.216.34', '169.254.169.254']),
    ).rejects.toMatchObject({
      code: ERR.URL_FORBIDDEN,
    });
    await expect(assertPublicHost(new URL('https://public.example/'), 'u', async () => ['93.184.216.34'])).resolves.toBeUndefined();
    await expect(
      assertPublicHost(new URL('https://nxdomain.example/'), 'u', async () => {
        throw new Error('ENOTFOUND');
      }),
    ).rejects.toMatchObject({ code: ERR.URL_FORBIDDEN });
  });

  it('blockPrivateNetworks: discovery URLs on a private host are refused before any OAuth request', async () => {
    const [as, rs] = await pair();
    const c = new McpAuthClient({
      clientName: 'server-side',
      blockPrivateNetworks: true,
      openAuthorizationUrl: async () => expect.unreachable(),
    });
    await expect(c.fetch(rs.mcpUrl)).rejects.toMatchObject({ code: ERR.URL_FORBIDDEN });
    expect(as.registrations).toHaveLength(0);
    expect(as.tokenRequests).toHaveLength(0);
  });

  it("privateNetworks (MCP security §SSRF): a non-loopback server's loopback pointer is refused by default ('auto') and followed with 'allow'", async (ctx) => {
    // A name that is not loopback by its text but resolves (from /etc/hosts) to loopback only.
    const name = hostname();
    const answers = await lookup(name, { all: true }).catch(() => []);
    if (/localhost\.?$/i.test(name) || answers.length === 0 || !answers.every((a) => a.address.startsWith('127.'))) ctx.skip();
    const [as, rs] = await pair();
    const viaName = rs.mcpUrl.replace('127.0.0.1', name);
    const never = async () => expect.unreachable();
    const auto = new McpAuthClient({ clientName: 'auto', allowInsecureRequests: true, openAuthorizationUrl: never });
    await expect(auto.fetch(viaName)).rejects.toMatchObject({ code: ERR.URL_FORBIDDEN });
    // 'allow' follows the pointer: the PRM is read (and refused for naming 127.0.0.1, not this name).
    const allow = new McpAuthClient({
      clientName: 'allow',
      privateNetworks: 'allow',
      allowInsecureRequests: true,
      openAuthorizationUrl: never,
    });
    await expect(allow.fetch(viaName)).rejects.toMatchObject({ code: ERR.PRM_RESOURCE_MISMATCH });
    expect(as.registrations).toHaveLength(0);
  });
});
