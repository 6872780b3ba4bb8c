import { describe, expect, it } from 'vitest';
import { classifyIpAddress, isLoopbackHost, isLoopbackListenAddress, isSpecialUseAddress, parseIPv6, urlHost } from '../src/address.js';

/**
 * The one loopback / special-use classifier of the kit (MCP security best practices §SSRF,
 * RFC 9728 §7.7, RFC 8252 §7.3, RFC 6761 §6.3, IANA special-purpose registries per RFC 6890).
 * Pure functions: nothing here resolves or connects.
 */
describe('isLoopbackHost (RFC 8252 §7.3, RFC 6761 §6.3)', () => {
  it.each([
    'localhost',
    'LOCALHOST',
    'localhost.',
    'app.localhost',
    'a.b.localhost.',
    '127.0.0.1',
    '127.0.0.2',
    '127.255.255.254',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '[::ffff:7f00:1]',
    '::ffff:7f00:2',
    '0:0:0:0:0:ffff:7f00:1',
  ])('%s is loopback', (host) => expect(isLoopbackHost(host)).toBe(true));

  it.each([
    'localhost.example.com',
    'mylocalhost',
    'example.com',
    '0.0.0.0',
    '::',
    '10.0.0.1',
    '128.0.0.1',
    '126.255.255.255',
    '::127.0.0.1',
    '::7f00:1',
    '::ffff:0:7f00:1',
    '2002:7f00:1::',
    '64:ff9b::7f00:1',
    '127.1',
    '2130706433',
    '0177.0.0.1',
    '',
  ])('%s is not loopback', (host) => expect(isLoopbackHost(host)).toBe(false));

  it('every URL-parser spelling of 127.0.0.1 and ::1 is loopback once parsed', () => {
    for (const spelling of [
      '2130706433',
      '0x7f000001',
      '0177.0.0.1',
      '127.1',
      '0x7f.1',
      '[::ffff:127.0.0.1]',
      '[0:0:0:0:0:0:0:1]',
      'LocalHost.',
    ]) {
      expect(isLoopbackHost(new URL(`http://${spelling}/`).hostname), spelling).toBe(true);
    }
  });
});

describe('classifyIpAddress (IANA special-purpose registries)', () => {
  /** `text`'s class (undefined: no IP literal); isSpecialUseAddress agrees: loopback is special-use too. */
  const expectClass = (text: string, expected: ReturnType<typeof classifyIpAddress>) => {
    expect(classifyIpAddress(text)).toBe(expected);
    expect(isSpecialUseAddress(text)).toBe(expected === 'special-use' || expected === 'loopback');
  };

  it.each([
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '100.64.0.1',
    '100.127.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.1',
    '192.0.2.1',
    '192.88.99.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.255',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::7f00:1',
    '::127.0.0.1',
    '::a00:1',
    '::ffff:0:7f00:1',
    '::FFFF:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::ffff:6440:1',
    '64:ff9b::7f00:1',
    '64:ff9b:1::1',
    '100::1',
    '2001::1',
    '2001:1ff::1',
    '2001:db8::1',
    '2002:7f00:1::',
    '2002:a00:1::1',
    '3fff::1',
    'fc00::1',
    'fd00:ec2::254',
    'fe80::1',
    'febf::1',
    'fec0::1',
    'ff02::1',
    '[fe80::1]',
    '4000::1',
    'e000::1',
  ])('%s is special-use', (address) => expectClass(address, 'special-use'));

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '169.253.255.255',
    '198.17.255.255',
    '223.255.255.255',
    '2606:4700::1111',
    '2a00:1450:4001::1',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '2003::1',
    '2001:4860:4860::8888',
    '2001:200::1',
    '3fff:1000::1',
    '[2001:4860:4860::8888]',
  ])('%s is public', (address) => expectClass(address, 'public'));

  it.each(['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1'])('%s is loopback', (address) =>
    expectClass(address, 'loopback'),
  );

  it.each([
    '',
    'localhost',
    'example.com',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '01.2.3.4',
    '0x7f.0.0.1',
    '127.0.0.1 ',
    ' 127.0.0.1',
    '::g',
    ':::1',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8::',
    '12345::1',
    'fe80::1%eth0',
    '[::1',
    '1.2.3.4::',
    '::1.2.3',
    '::1.2.3.4.5',
  ])('%j is not an IP literal', (text) => expectClass(text, undefined));

  it('parses the forms RFC 4291 §2.2 allows', () => {
    expect(parseIPv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('1:2:3:4:5:6:7::')).toEqual([1, 2, 3, 4, 5, 6, 7, 0]);
    expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIPv6('1:2:3:4:5:6:1.2.3.4')).toEqual([1, 2, 3, 4, 5, 6, 0x0102, 0x0304]);
  });
});

/**
 * Who can reach a server is decided by the address it listens on, not by its issuer: `0.0.0.0`
 * and `::` accept connections on every interface (POSIX bind(2) with INADDR_ANY / in6addr_any),
 * and Node's `listen(port)` without a host binds `::` (or `0.0.0.0`).
 */
describe('isLoopbackListenAddress (the socket, not the issuer)', () => {
  it.each(['127.0.0.1', '127.0.0.2', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST', ' 127.0.0.1 '])(
    '%s is reachable from this machine only',
    (host) => expect(isLoopbackListenAddress(host)).toBe(true),
  );

  it.each([
    ['0.0.0.0', 'IPv4 unspecified: every interface'],
    ['::', 'IPv6 unspecified: every interface (and IPv4 on a dual-stack socket)'],
    ['[::]', 'IPv6 unspecified, bracketed'],
    ['::ffff:0.0.0.0', 'IPv4-mapped unspecified'],
    [undefined, 'no host: Node listens on every interface'],
    ['', 'empty host'],
    ['10.0.0.5', 'a private interface address'],
    ['192.168.1.20', 'a LAN address'],
    ['203.0.113.7', 'a public interface address'],
    ['fe80::1', 'IPv6 link-local'],
    ['app.localhost', 'a name the system resolver need not map to loopback'],
    ['auth.example.com', 'a name'],
    ['127.1', 'not a strict literal'],
  ])('%s is reachable from outside (%s)', (host: string | undefined, _why: string) => expect(isLoopbackListenAddress(host)).toBe(false));
});

describe('urlHost: the host the address rules judge (RFC 3986 §3.2.2 IP-literal without brackets)', () => {
  it.each([
    ['https://[::1]:8443/c.json', '::1'],
    ['https://[::ffff:7f00:1]/x', '::ffff:7f00:1'],
    ['https://App.Example./c.json', 'app.example.'],
    ['http://127.0.0.1:3000/mcp', '127.0.0.1'],
  ])('%s → %s', (url, host) => {
    expect(urlHost(new URL(url))).toBe(host);
  });
});
