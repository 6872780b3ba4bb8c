import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ERR, McpAuthError } from './errors.js';

/**
 * Private and reserved ranges (RFC 9728 §7.7, MCP Security Best Practices → SSRF), matched with
 * node's BlockList rather than hand-written parsing (IPv4 literals in hex/octal are already
 * normalised by the WHATWG URL parser; IPv4-mapped IPv6 is unwrapped below).
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::/96
  ['::ffff:0:0:0', 96], // IPv4-translated
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32], // Teredo
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4 embeds an arbitrary IPv4 address
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** True when an IP address literal is private, loopback, link-local or otherwise reserved. */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '');
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip) ?? /^0:0:0:0:0:ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
    const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
    if (hexMapped) {
      const hi = parseInt(hexMapped[1]!, 16);
      const lo = parseInt(hexMapped[2]!, 16);
      return blocked.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
    }
    return blocked.check(ip, 'ipv6');
  }
  return true; // not an address at all: refuse rather than guess
}

export type Resolver = (hostname: string) => Promise<string[]>;

const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Refuses a URL whose host is, or resolves to, a private or reserved address. The check happens
 * before the request; DNS answers can still change between check and use (rebinding), so
 * server-side deployments should add an egress proxy as the spec advises.
 */
export async function assertPublicHost(url: URL, what: string, resolve: Resolver = systemResolver): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch (cause) {
      throw new McpAuthError(ERR.URL_FORBIDDEN, `${what}: host ${host} does not resolve`, { cause });
    }
  }
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) {
    throw new McpAuthError(ERR.URL_FORBIDDEN, `${what}: host ${host} is a private or reserved address; refused (SSRF protection)`);
  }
}
