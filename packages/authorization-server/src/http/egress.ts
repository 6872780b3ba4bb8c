/**
 * Every outgoing request of the authorization server: oidc-provider's (CIMD documents, client
 * `jwks_uri`; its `fetch` option, see cimd.ts) and openid-client's (upstream identity providers:
 * discovery, JWKS, token endpoint; upstream/login.ts). Each goes through {@link createEgressFetch},
 * whose dispatcher applies the protocol egress policy to the resolved address before connecting
 * (MCP security best practices §SSRF, draft-ietf-oauth-client-id-metadata-document §SSRF).
 */
import { rootCertificates } from 'node:tls';
import {
  EgressRefusedError,
  PUBLIC_ONLY,
  egressPolicyForPeer,
  resolveEgress,
  tryCreateEgressDispatcher,
  type EgressPolicy,
  type EgressResolver,
  urlHost,
} from '@mcp-auth-kit/protocol';
import type { CimdConfig } from '../config/types.js';
import type { Logger } from '../ops/logger.js';

export type EgressFetch = (url: string | URL, init?: Omit<RequestInit, 'dispatcher'> & { dispatcher?: unknown }) => Promise<Response>;

/**
 * URLs a client names (its metadata document, `jwks_uri`): public addresses only. The dev switch
 * `cimd.allowPrivateNetwork` (refused at start-up unless the issuer is loopback) opens loopback and
 * private addresses so a local test host can serve them.
 */
export function clientUrlEgressPolicy(cimd: CimdConfig): EgressPolicy {
  return cimd.allowPrivateNetwork ? { loopback: true, specialUse: true } : PUBLIC_ONLY;
}

/**
 * URLs an upstream identity provider's discovery document names: public addresses, loopback only
 * for a provider configured on a loopback host (development), private addresses only when the
 * operator states that the provider lives on the private network.
 */
export function upstreamEgressPolicy(issuer: string, allowPrivateNetwork: boolean | undefined): EgressPolicy {
  return egressPolicyForPeer(issuer, { allowPrivateNetwork: !!allowPrivateNetwork });
}

export interface EgressFetchOptions {
  policy: EgressPolicy;
  logger: Logger;
  /** What the requests are for, in refusal logs (`client_metadata`, `upstream:<name>`). */
  purpose: string;
  /** Dev only: an extra PEM CA trusted besides Node's roots. */
  extraCaCertificates?: string | undefined;
  /** DNS stand-in (tests). */
  resolve?: EgressResolver;
}

/**
 * A fetch whose every connection is checked by the egress policy: the dispatcher a caller passes
 * (oidc-provider passes its own, which checks the peer only after connecting) is replaced.
 */
export function createEgressFetch(options: EgressFetchOptions): EgressFetch {
  const onRefused = (host: string, reason: string) =>
    options.logger.warn('outgoing request refused by the egress policy', { purpose: options.purpose, host, reason });
  const dispatcher = tryCreateEgressDispatcher({
    policy: options.policy,
    ...(options.extraCaCertificates && { ca: [...rootCertificates, options.extraCaCertificates] }),
    ...(options.resolve && { resolve: options.resolve }),
    onRefused,
  });
  if (dispatcher) return (url, init = {}) => fetch(url, { ...init, dispatcher } as RequestInit);

  options.logger.warn(
    'egress policy: Node’s undici is not reachable here (a VM context or another global dispatcher); addresses are checked before connecting, without pinning',
    {
      purpose: options.purpose,
    },
  );
  return async (url, init = {}) => {
    const host = urlHost(new URL(url));
    const decision = await resolveEgress(host, options.policy, options.resolve);
    if (!decision.ok) {
      onRefused(host, decision.reason);
      throw new TypeError('fetch failed', { cause: new EgressRefusedError(host, decision.reason) });
    }
    const { dispatcher: _callers, ...rest } = init;
    return fetch(url, rest as RequestInit);
  };
}
