/**
 * RFC 9449 DPoP at the authorization server: oidc-provider does the protocol (proof validation,
 * `cnf.jkt` in JWT access tokens, bound refresh tokens for public clients, `dpop_jkt`, replay
 * detection through the shared adapter); this module turns our configuration into its options.
 */
import { createHmac } from 'node:crypto';

import type { DpopConfig, ResolvedConfig } from '../config/types.js';
import { decodeKey32, KEY_32_RULE } from '../config/secret-key.js';

export type { DpopConfig };

export { DEFAULT_DPOP_SIGNING_ALGS } from '../config/defaults.js';
/** What oidc-provider can verify for DPoP proofs (asymmetric only, RFC 9449 §4.2). */
const SUPPORTED = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'];

/** Problems of the DPoP key and algorithms (the option's shape: config/schema.ts). */
export function dpopConfigProblems(dpop: unknown): string[] {
  if (typeof dpop !== 'object' || dpop === null) return [];
  const d = dpop as DpopConfig;
  const problems: string[] = [];
  if (d.nonceSecret !== undefined && decodeKey32(d.nonceSecret) === undefined) problems.push(`dpop.nonceSecret: ${KEY_32_RULE}`);
  if (d.algorithms !== undefined) {
    if (!Array.isArray(d.algorithms) || d.algorithms.length === 0) problems.push('dpop.algorithms: must be a non-empty array');
    else
      for (const alg of d.algorithms) {
        if (!SUPPORTED.includes(alg))
          problems.push(`dpop.algorithms: "${String(alg)}" is not an asymmetric JWS algorithm supported for DPoP`);
      }
  }
  return problems;
}

/** The nonce key: the configured secret, else one derived from the shared cookie key. */
export function dpopNonceSecret(config: DpopConfig | undefined, cookieKeys: readonly string[]): Buffer {
  const configured = decodeKey32(config?.nonceSecret);
  if (configured) return configured;
  const base = cookieKeys[0];
  if (!base) throw new Error('the key store returned no cookie key to derive the DPoP nonce secret from');
  return createHmac('sha256', base).update('mcp-auth-kit dpop nonce secret v1').digest();
}

/** oidc-provider `features.dPoP` and `enabledJWA.dPoPSigningAlgValues`, from the resolved `dpop` options. */
export function dpopProviderOptions(config: ResolvedConfig['dpop'], cookieKeys: readonly string[]) {
  return {
    feature: config.enabled
      ? {
          enabled: true,
          nonceSecret: dpopNonceSecret(config, cookieKeys),
          requireNonce: () => config.requireNonce,
          // replay protection: each proof jti once per client (oidc-provider ReplayDetection, shared store)
          allowReplay: false,
        }
      : { enabled: false },
    algorithms: [...config.algorithms],
  };
}
