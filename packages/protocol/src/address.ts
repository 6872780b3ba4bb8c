/**
 * Address classes for every loopback and SSRF decision of the kit (MCP security best practices
 * §SSRF, RFC 9728 §7.7, RFC 8252 §7.3, RFC 6761 §6.3, the IANA special-purpose address registries
 * of RFC 6890 and updates). Pure functions: no DNS, no sockets.
 *
 * Literals are parsed strictly (dotted-quad IPv4, RFC 4291 IPv6): the WHATWG URL parser already
 * turns every other IPv4 spelling (decimal, hex, octal, short) into a dotted quad, and a string
 * that is neither strict form is not an address, so callers decide what a non-address means.
 */

export type AddressClass = 'loopback' | 'special-use' | 'public';

type Range = readonly [base: number, prefix: number];

/** IPv4 ranges that are not globally reachable public unicast (besides loopback 127/8). */
const SPECIAL_V4: readonly Range[] = [
  [v4(0, 0, 0, 0), 8], // "this network"
  [v4(10, 0, 0, 0), 8], // private
  [v4(100, 64, 0, 0), 10], // shared address space (CGNAT)
  [v4(169, 254, 0, 0), 16], // link-local, cloud metadata endpoints
  [v4(172, 16, 0, 0), 12], // private
  [v4(192, 0, 0, 0), 24], // IETF protocol assignments
  [v4(192, 0, 2, 0), 24], // TEST-NET-1
  [v4(192, 88, 99, 0), 24], // 6to4 relay anycast (deprecated)
  [v4(192, 168, 0, 0), 16], // private
  [v4(198, 18, 0, 0), 15], // benchmarking
  [v4(198, 51, 100, 0), 24], // TEST-NET-2
  [v4(203, 0, 113, 0), 24], // TEST-NET-3
  [v4(224, 0, 0, 0), 4], // multicast
  [v4(240, 0, 0, 0), 4], // reserved, limited broadcast
];

function v4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function inRange(address: number, [base, prefix]: Range): boolean {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return (address & mask) >>> 0 === base;
}

/** A strict dotted-quad IPv4 literal as a 32-bit number, or undefined. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    // No leading zeros: "0177" is octal to some parsers and decimal to others.
    if (!/^(?:0|[1-9]\d{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/** An RFC 4291 IPv6 literal (brackets allowed, no zone) as eight 16-bit groups, or undefined. */
export function parseIPv6(text: string): number[] | undefined {
  const literal = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (!/^[0-9a-fA-F:.]+$/.test(literal)) return undefined;
  const halves = literal.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (const [index, piece] of pieces.entries()) {
      if (index === pieces.length - 1 && piece.includes('.')) {
        const embedded = parseIPv4(piece);
        if (embedded === undefined) return undefined;
        out.push(embedded >>> 16, embedded & 0xffff);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
        out.push(parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  // A dotted quad may only end the address, so it cannot sit in the head of a "::" form.
  if (halves.length === 2 && halves[0]!.includes('.')) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

function classifyV4(address: number): AddressClass {
  if (address >>> 24 === 127) return 'loopback';
  return SPECIAL_V4.some((range) => inRange(address, range)) ? 'special-use' : 'public';
}

function classifyV6(g: number[]): AddressClass {
  const zeros = (count: number) => g.slice(0, count).every((part) => part === 0);
  if (zeros(7) && g[7] === 1) return 'loopback';
  // IPv4-mapped ::ffff:0:0/96 is the IPv4 address itself on a dual-stack socket.
  if (zeros(5) && g[5] === 0xffff) return classifyV4(((g[6]! << 16) | g[7]!) >>> 0);
  // Unspecified, the deprecated IPv4-compatible ::/96 and IPv4-translated ::ffff:0:0:0/96.
  if (zeros(6) || (zeros(4) && g[4] === 0xffff && g[5] === 0)) return 'special-use';
  // Only 2000::/3 is global unicast; everything else (ULA, link-local, site-local, multicast,
  // NAT64 64:ff9b::/96 and 64:ff9b:1::/48, discard 100::/64, reserved) is not.
  const first = g[0]!;
  if (first >>> 13 !== 0b001) return 'special-use';
  if (first === 0x2001 && g[1]! <= 0x01ff) return 'special-use'; // IETF protocol assignments, Teredo
  if (first === 0x2001 && g[1] === 0x0db8) return 'special-use'; // documentation
  if (first === 0x2002) return 'special-use'; // 6to4 embeds any IPv4 address
  if (first === 0x3fff && g[1]! <= 0x0fff) return 'special-use'; // documentation (RFC 9637)
  return 'public';
}

/** The class of an IP literal (brackets allowed), or undefined when `text` is not one. */
export function classifyIpAddress(text: string): AddressClass | undefined {
  const ipv4 = parseIPv4(text);
  if (ipv4 !== undefined) return classifyV4(ipv4);
  const ipv6 = parseIPv6(text);
  return ipv6 ? classifyV6(ipv6) : undefined;
}

/** True for an IP literal that is loopback or otherwise not public unicast. */
export function isSpecialUseAddress(text: string): boolean {
  const kind = classifyIpAddress(text);
  return kind === 'loopback' || kind === 'special-use';
}

/** A URL's host as the address rules and the egress policy take it: an IPv6 literal without its brackets. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * True for a host that always means this machine: `localhost` and `*.localhost` (RFC 6761 §6.3,
 * with or without the root dot), 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return classifyIpAddress(host) === 'loopback';
}

/**
 * True when a server listening on `host` can only be reached from this machine: a loopback IP
 * literal (127.0.0.0/8, ::1, IPv4-mapped 127/8) or `localhost`. The unspecified addresses
 * (`0.0.0.0`, `::`), every other address and an absent host (Node then listens on every
 * interface) are reachable from outside. This judges the socket, not the issuer: an issuer on
 * `localhost` says nothing about who can connect to a server bound to `0.0.0.0`.
 */
export function isLoopbackListenAddress(host: string | undefined): boolean {
  if (host === undefined) return false;
  const text = host.trim().toLowerCase();
  // `*.localhost` is loopback for URLs (RFC 6761 §6.3), but a bind resolves the name through
  // the system resolver, which need not follow RFC 6761 for subdomains: literals and `localhost` only.
  if (text === 'localhost') return true;
  return classifyIpAddress(text) === 'loopback';
}
