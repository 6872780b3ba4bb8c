/**
 * The egress policy of the kit: which addresses an outgoing request of the authorization server
 * or the client library may connect to (MCP security best practices §SSRF, RFC 9728 §7.7,
 * draft-ietf-oauth-client-id-metadata-document §SSRF). Pure functions over a host and the
 * addresses it resolved to; the connection itself is made by egress-connector.ts, which asks
 * this module about every address before it connects.
 */
import { classifyIpAddress, isLoopbackHost, type AddressClass } from './address.js';

/** Address classes a request may reach besides public unicast, which is always allowed. */
export interface EgressPolicy {
  /** 127.0.0.0/8, ::1, IPv4-mapped loopback. */
  readonly loopback: boolean;
  /** Every other address that is not public unicast: private, link-local, CGNAT, ULA, … */
  readonly specialUse: boolean;
}

/** Public unicast only: the default for any URL an untrusted party names. */
export const PUBLIC_ONLY: EgressPolicy = Object.freeze({ loopback: false, specialUse: false });
/** No address restriction (explicit opt-out by the operator or user). */
export const ANY_ADDRESS: EgressPolicy = Object.freeze({ loopback: true, specialUse: true });

/** Allowed: the checked addresses, in the resolver's order, to connect to (and only those). */
export type EgressDecision = { ok: true; addresses: string[] } | { ok: false; reason: string };

function allowedClass(kind: AddressClass, policy: EgressPolicy): boolean {
  if (kind === 'public') return true;
  return kind === 'loopback' ? policy.loopback : policy.specialUse;
}

/** True when every address the policy allows is allowed (nothing to check, nothing to pin). */
export function allowsEveryAddress(policy: EgressPolicy): boolean {
  return policy.loopback && policy.specialUse;
}

/**
 * Decides one connection from `host` (a URL hostname: a name or an IP literal, brackets allowed)
 * and the addresses it resolved to (for a literal: the literal itself). Refused when there is no
 * address, when an answer is not an IP address, or when ANY answer is of a class the policy does
 * not allow: a name that mixes public and private answers is how DNS rebinding is staged, so the
 * name is refused as a whole. Allowed: the addresses to connect to, which the caller must use (a
 * second resolution could answer differently).
 */
export function checkEgress(host: string, addresses: readonly string[], policy: EgressPolicy): EgressDecision {
  if (addresses.length === 0) return { ok: false, reason: `host ${host} has no address` };
  for (const address of addresses) {
    const kind = classifyIpAddress(address);
    if (kind === undefined) return { ok: false, reason: `host ${host} resolved to "${address}", which is not an IP address` };
    if (!allowedClass(kind, policy)) {
      return {
        ok: false,
        reason: `host ${host} is or resolves to a loopback or private address (${address}, ${kind}); refused by the egress policy`,
      };
    }
  }
  return { ok: true, addresses: addresses.map((address) => address.replace(/^\[|\]$/g, '')) };
}

/**
 * A decision that needs no resolution: IP literals are decided here, and a loopback NAME
 * (`localhost`, `*.localhost`, RFC 6761 §6.3) is refused without asking DNS when loopback is not
 * allowed. Undefined: `host` is a name whose answers decide (see {@link checkEgress}).
 */
export function checkEgressHost(host: string, policy: EgressPolicy): EgressDecision | undefined {
  const bare = host.replace(/^\[|\]$/g, '');
  if (classifyIpAddress(bare) !== undefined) return checkEgress(host, [bare], policy);
  if (!policy.loopback && isLoopbackHost(bare)) {
    return { ok: false, reason: `host ${host} is a loopback or private address (a loopback name); refused by the egress policy` };
  }
  if (bare.includes(':') || bare === '') return { ok: false, reason: `host "${host}" is neither a name nor an IP address` };
  return undefined;
}

export interface PeerEgressOptions {
  /** Loopback refused even when the peer itself is on loopback (server-side deployments). */
  blockLoopback?: boolean;
  /** Private and other special-use addresses allowed (an intranet the operator or user vouches for). */
  allowPrivateNetwork?: boolean;
}

/**
 * The policy for URLs that a peer names in its metadata (an MCP server's PRM and challenge, an
 * upstream identity provider's discovery document): public addresses; loopback only when the
 * peer's own URL is on a loopback host — a local server may point at local services, a remote one
 * must not reach into the machine that fetches; private addresses only on explicit opt-in. The
 * peer is judged by its URL's host text, never by resolving it: a hostile name could resolve to
 * loopback just for this decision.
 */
export function egressPolicyForPeer(peerUrl: string | URL, options: PeerEgressOptions = {}): EgressPolicy {
  let host: string;
  try {
    host = new URL(peerUrl).hostname;
  } catch {
    return PUBLIC_ONLY;
  }
  const loopback = !options.blockLoopback && isLoopbackHost(host);
  return Object.freeze({ loopback, specialUse: !!options.allowPrivateNetwork });
}
