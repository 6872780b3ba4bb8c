import { describe, expect, it } from 'vitest';
import { assertPublicHost, isPrivateAddress } from '@mcp-auth-kit/client/core';
// The AS's CIMD pre-connection literal check is the shared classifier itself.
import { isSpecialUseAddress as isPrivateAddressLiteral } from '@mcp-auth-kit/protocol';

/**
 * SSRF address classification as pure functions (MCP security best practices §SSRF,
 * RFC 9728 §7.7). No connection is ever opened here: every address below is only classified.
 * Ranges: IANA IPv4/IPv6 Special-Purpose Address Registries (RFC 6890 and updates), entries
 * that are not globally reachable.
 */
const SPECIAL_V4: Array<[string, string]> = [
  ['0.0.0.0', '"this network" 0/8'],
  ['0.1.2.3', '"this network" 0/8'],
  ['10.0.0.1', 'private 10/8'],
  ['10.255.255.255', 'private 10/8'],
  ['100.64.0.1', 'CGNAT 100.64/10'],
  ['100.127.255.254', 'CGNAT 100.64/10'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback 127/8'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.255', 'private 172.16/12'],
  ['192.0.0.1', 'IETF protocol assignments 192.0.0/24'],
  ['192.0.2.1', 'TEST-NET-1 192.0.2/24'],
  ['192.168.1.1', 'private 192.168/16'],
  ['198.18.0.1', 'benchmarking 198.18/15'],
  ['198.19.255.255', 'benchmarking 198.18/15'],
  ['198.51.100.7', 'TEST-NET-2 198.51.100/24'],
  ['203.0.113.9', 'TEST-NET-3 203.0.113/24'],
  ['224.0.0.1', 'multicast 224/4'],
  ['240.0.0.1', 'reserved 240/4'],
  ['255.255.255.255', 'limited broadcast'],
];

const SPECIAL_V6: Array<[string, string]> = [
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback, bracketed'],
  ['0:0:0:0:0:0:0:1', 'loopback, uncompressed'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback (dotted)'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback (hex, as the URL parser writes it)'],
  ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped loopback, uncompressed hex'],
  ['::FFFF:10.0.0.1', 'IPv4-mapped private, upper case'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local (169.254.169.254)'],
  ['::ffff:6440:1', 'IPv4-mapped CGNAT (100.64.0.1)'],
  ['::7f00:1', 'IPv4-compatible loopback (deprecated ::/96)'],
  ['::127.0.0.1', 'IPv4-compatible loopback, dotted'],
  ['::ffff:0:7f00:1', 'IPv4-translated ::ffff:0:0/96'],
  ['64:ff9b::7f00:1', 'NAT64 well-known prefix embedding 127.0.0.1'],
  ['64:ff9b:1::1', 'NAT64 local-use 64:ff9b:1::/48'],
  ['100::1', 'discard-only 100::/64'],
  ['2001::1', 'Teredo 2001::/32'],
  ['2001:db8::1', 'documentation 2001:db8::/32'],
  ['2002:7f00:1::', '6to4 embedding 127.0.0.1'],
  ['2002:a00:1::1', '6to4 embedding 10.0.0.1'],
  ['fc00::1', 'unique local fc00::/7'],
  ['fd00:ec2::254', 'unique local (cloud metadata)'],
  ['fe80::1', 'link-local fe80::/10'],
  ['febf::1', 'link-local fe80::/10 upper end'],
  ['fec0::1', 'site-local (deprecated) fec0::/10'],
  ['ff02::1', 'multicast ff00::/8'],
];

const PUBLIC: Array<[string, string]> = [
  ['8.8.8.8', 'public IPv4'],
  ['1.1.1.1', 'public IPv4'],
  ['100.63.255.255', 'just below CGNAT'],
  ['100.128.0.0', 'just above CGNAT'],
  ['172.15.255.255', 'just below 172.16/12'],
  ['172.32.0.0', 'just above 172.16/12'],
  ['169.253.255.255', 'just below link-local'],
  ['198.17.255.255', 'just below 198.18/15'],
  ['223.255.255.255', 'just below multicast'],
  ['2606:4700::1111', 'public IPv6'],
  ['2a00:1450:4001::1', 'public IPv6'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public'],
  ['2003::1', 'public IPv6 just above 6to4'],
];

describe('SSRF address classifier of @mcp-auth-kit/client: isPrivateAddress (pure function)', () => {
  for (const [address, why] of [...SPECIAL_V4, ...SPECIAL_V6]) {
    it(`${address} (${why}) is refused`, () => {
      expect(isPrivateAddress(address)).toBe(true);
    });
  }
  for (const [address, why] of PUBLIC) {
    it(`${address} (${why}) is allowed`, () => {
      expect(isPrivateAddress(address)).toBe(false);
    });
  }

  it('not an IP address at all → refused rather than guessed', () => {
    for (const junk of ['', 'localhost', 'example.com', '1.2.3', '::g', '999.1.1.1', '127.0.0.1 ', '[::1']) {
      expect(isPrivateAddress(junk), junk).toBe(true);
    }
  });

  it('URL-parser spellings of loopback (decimal, hex, octal, short, mapped) all classify as private', () => {
    for (const spelling of ['2130706433', '0x7f000001', '0177.0.0.1', '127.1', '0x7f.1', '[::ffff:127.0.0.1]', '[0:0:0:0:0:ffff:7f00:1]']) {
      const host = new URL(`https://${spelling}/x`).hostname;
      expect(isPrivateAddress(host), `${spelling} → ${host}`).toBe(true);
    }
  });

  it('assertPublicHost: a name resolving to any private address is refused (resolver stubbed, no DNS, no connection)', async () => {
    const resolver = (answers: string[]) => async () => answers;
    await expect(assertPublicHost(new URL('https://rebind.test/x'), 'PRM', resolver(['93.184.216.34', '127.0.0.1']))).rejects.toThrow(
      /private|reserved/,
    );
    await expect(assertPublicHost(new URL('https://v6.test/x'), 'PRM', resolver(['::ffff:169.254.169.254']))).rejects.toThrow();
    await expect(assertPublicHost(new URL('https://empty.test/x'), 'PRM', resolver([]))).rejects.toThrow();
    await expect(assertPublicHost(new URL('https://public.test/x'), 'PRM', resolver(['93.184.216.34']))).resolves.toBeUndefined();
    await expect(assertPublicHost(new URL('https://[fe80::1]/x'), 'PRM', resolver([]))).rejects.toThrow();
  });
});

describe('SSRF pre-connection literal check of the AS CIMD fetch: isPrivateAddressLiteral (pure function)', () => {
  const unwrap = (a: string) => a.replace(/^\[|\]$/g, '');
  // The AS relies on this check for IP literals before oidc-provider's connect-time check.
  const covered = [
    '0.0.0.0',
    '10.0.0.1',
    '100.64.0.1',
    '127.0.0.1',
    '169.254.169.254',
    '172.16.0.1',
    '192.168.1.1',
    '224.0.0.1',
    '240.0.0.1',
    '::',
    '::1',
    '::ffff:7f00:1',
    'fc00::1',
    'fd00:ec2::254',
    'fe80::1',
  ];
  for (const address of covered) {
    it(`${address} is refused before any connection`, () => {
      expect(isPrivateAddressLiteral(unwrap(address))).toBe(true);
    });
  }
  for (const [address] of PUBLIC.filter(([a]) => !a.startsWith('::ffff:'))) {
    it(`${address} is not refused by the literal check`, () => {
      expect(isPrivateAddressLiteral(address)).toBe(false);
    });
  }

  // Special-use literals beyond the common private ranges (IETF protocol assignments, benchmarking,
  // IPv4-compatible, NAT64, 6to4, Teredo, site-local, multicast) are refused before any connection.
  for (const address of ['192.0.0.1', '198.18.0.1', '::7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::', '2001::1', 'fec0::1', 'ff02::1']) {
    it(`${address} is refused before any connection (special-use range)`, () => {
      expect(isPrivateAddressLiteral(address)).toBe(true);
    });
  }
});
