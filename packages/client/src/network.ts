import {
  PUBLIC_ONLY,
  classifyIpAddress,
  tryCreateEgressDispatcher,
  resolveEgress,
  type EgressDispatcher,
  type EgressPolicy,
  urlHost,
} from '@mcp-auth-kit/protocol';
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

/**
 * Refuses a URL whose host is, or resolves to, an address the egress policy does not allow, with
 * a clear error before any request. The connection itself is checked again on the address it
 * uses ({@link egressDispatcher}), so an answer that changes in between (rebinding) is refused too.
 */
export async function assertEgressAllowed(url: URL, policy: EgressPolicy, what: string, resolve?: Resolver): Promise<void> {
  const decision = await resolveEgress(urlHost(url), policy, resolve);
  if (!decision.ok) throw new McpAuthError(ERR.URL_FORBIDDEN, egressRefusalMessage(what, decision.reason));
}

/** The refusal as the user reads it, with the way out for an intranet they trust. */
export function egressRefusalMessage(what: string, reason: string): string {
  return `${what}: ${reason} (SSRF protection; for a trusted intranet: privateNetworks 'allow', CLI --private-networks allow)`;
}

/** {@link assertEgressAllowed} with public addresses only. */
export function assertPublicHost(url: URL, what: string, resolve?: Resolver): Promise<void> {
  return assertEgressAllowed(url, PUBLIC_ONLY, what, resolve);
}

const dispatchers = new Map<string, EgressDispatcher>();
const stubbed = new WeakMap<Resolver, Map<string, EgressDispatcher>>();

/**
 * The dispatcher that enforces `policy` when connecting (one per policy, shared by all clients);
 * undefined where Node's undici cannot be reached (e.g. jest's VM context): the check before each
 * request (`assertEgressAllowed`) then stands alone.
 */
export function egressDispatcher(policy: EgressPolicy, resolve?: Resolver): EgressDispatcher | undefined {
  const key = `${policy.loopback}/${policy.specialUse}`;
  let cache = dispatchers;
  if (resolve) {
    cache = stubbed.get(resolve) ?? new Map();
    stubbed.set(resolve, cache);
  }
  let dispatcher = cache.get(key);
  if (!dispatcher) {
    dispatcher = tryCreateEgressDispatcher({ policy, ...(resolve && { resolve }) });
    if (!dispatcher) return undefined;
    cache.set(key, dispatcher);
  }
  return dispatcher;
}
