/**
 * The signing keys of each trusted IdP: its inline `jwks`, or its `jwksUri` fetched through the
 * AS egress policy (egress.ts: public addresses only, loopback for a loopback IdP, private
 * addresses on the operator's say-so), cached and refetched by jose on an unknown `kid`.
 */
import { createLocalJWKSet, createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from 'jose';
import { createEgressFetch, upstreamEgressPolicy } from '../../http/egress.js';
import type { Logger } from '../../ops/logger.js';
import type { ResolvedIdJagConfig, TrustedIdpConfig } from '../../config/types.js';

export interface TrustedIdp {
  config: TrustedIdpConfig;
  name: string;
  algorithms: string[];
  keys: JWTVerifyGetKey;
}

export function trustedIdps(configs: ResolvedIdJagConfig['trustedIdps'], logger: Logger): Map<string, TrustedIdp> {
  const byIssuer = new Map<string, TrustedIdp>();
  for (const config of configs) {
    let keys: JWTVerifyGetKey;
    if (config.jwks) {
      keys = createLocalJWKSet(config.jwks);
    } else {
      const egressFetch = createEgressFetch({
        policy: upstreamEgressPolicy(config.jwksUri!, config.allowPrivateNetwork),
        logger,
        purpose: `id-jag-jwks:${config.name ?? config.issuer}`,
      });
      keys = createRemoteJWKSet(new URL(config.jwksUri!), {
        timeoutDuration: 5000,
        cooldownDuration: 30_000,
        cacheMaxAge: 10 * 60_000,
        [customFetch]: (url: string, init: RequestInit) => egressFetch(url, { ...init, redirect: 'manual' }),
      });
    }
    byIssuer.set(config.issuer, {
      config,
      name: config.name ?? config.issuer,
      algorithms: config.algorithms,
      keys,
    });
  }
  return byIssuer;
}
