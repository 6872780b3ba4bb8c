import { lookup } from 'node:dns/promises';
import { classifyIpAddress } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthError } from './errors.js';

/**
 * True when an IP address literal is private, loopback, link-local or otherwise reserved
 * (RFC 9728 §7.7, MCP security best practices §SSRF). Anything that is not an address literal is
 * refused rather than guessed; the classes themselves are @mcp-auth-kit/protocol's.
 */
export function isPrivateAddress(address: string): boolean {
  return classifyIpAddress(address) !== 'public';
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
  if (classifyIpAddress(host) !== undefined) addresses = [host];
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
