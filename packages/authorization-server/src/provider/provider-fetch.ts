/**
 * oidc-provider's one `fetch` option, split into one fetcher per purpose: a fetched document is
 * used only for the purpose it was fetched for. A client's `jwks_uri` answer must never become
 * some URL's client metadata (issue 40 item 2: a `jwks_uri` behind an open redirect, fetched with
 * redirects followed, used to fill the CIMD cache for the victim host's URL).
 *
 * Which request is which: oidc-provider 9 fetches a CIMD document with `GET` and
 * `redirect: 'manual'` (the draft does not follow redirects for it), a client's `jwks_uri`
 * with `GET` and no `redirect` option; its other requests (CIBA notification, back-channel
 * logout: `POST`) belong to features this server leaves off, and `sector_identifier_uri` is
 * refused for every client (client-url-fields.ts). test/security/network-cache-inventory.test.ts
 * pins these shapes in oidc-provider's source, so an upgrade that changes them fails there.
 * A request routed the wrong way could not poison anything either: the CIMD fetcher fetches
 * exactly the URL it is given, without redirects, and the JWKS fetcher caches nothing.
 */
import type { CimdConfig } from '../config/types.js';
import type { Logger } from '../ops/logger.js';
import type { FetchLike } from '../clients/cimd.js';
import { clientUrlEgressPolicy, createEgressFetch } from '../http/egress.js';

export type ProviderFetchPurpose = 'client_metadata' | 'jwks_uri';

/** The purpose of one oidc-provider request, from how the provider makes it; undefined: none of ours. */
export function providerFetchPurpose(options: {
  method?: string | undefined;
  redirect?: RequestInit['redirect'] | undefined;
}): ProviderFetchPurpose | undefined {
  if ((options.method ?? 'GET').toUpperCase() !== 'GET') return undefined;
  return options.redirect === 'manual' ? 'client_metadata' : 'jwks_uri';
}

/**
 * A client's `jwks_uri` (RFC 7591 §2; `private_key_jwt`, RFC 7523): through the egress policy
 * for client-named URLs, redirects followed as oidc-provider asks (every hop's address is checked
 * by the egress dispatcher), and nothing kept here — oidc-provider keeps the keys on that client
 * alone, for the response's cache lifetime.
 */
export function createJwksUriFetch(config: CimdConfig, logger: Logger): FetchLike {
  const egressFetch = createEgressFetch({
    policy: clientUrlEgressPolicy(config),
    logger,
    purpose: 'jwks_uri',
    extraCaCertificates: config.allowPrivateNetwork ? config.extraCaCertificates : undefined,
  });
  return (url, options) => egressFetch(url, options);
}

/** The `fetch` given to oidc-provider: each request goes to its purpose's fetcher; one without a purpose is refused. */
export function createProviderFetch(fetchers: Record<ProviderFetchPurpose, FetchLike>, logger: Logger): FetchLike {
  return async (url, options) => {
    const purpose = providerFetchPurpose(options);
    if (!purpose) {
      logger.warn('outgoing request refused: no fetcher for it', { method: options.method });
      throw new TypeError('the authorization server makes no such outgoing request');
    }
    return fetchers[purpose](url, options);
  };
}
