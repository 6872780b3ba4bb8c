/**
 * DPoP at the ID-JAG grant (draft-ietf-oauth-identity-assertion-authz-grant §8.6.2, RFC 9449):
 * a proof that comes with the request is validated (§4.3 of RFC 9449: signature by the embedded
 * key, `typ`, `htm`, `htu`, `iat`, one-time `jti`) and binds the access token to its key
 * (`cnf.jkt`); an ID-JAG with a `cnf.jkt` needs a proof by that very key, and so does every
 * refresh of the tokens it gets (the refresh token is bound to it too); a client registered with
 * `dpop_bound_access_tokens` needs a proof at all (RFC 9449 §5.2).
 *
 * oidc-provider's own proof check is not reachable from a grant registered on its public API, so
 * it is made here with jose. Server nonces (`dpop.requireNonce`) are oidc-provider's and cannot be
 * checked here: with them on, a proof at this grant is refused with that explanation.
 */
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK } from 'jose';
import type { KeyValueStore } from '../../storage/types.js';
import { refuse } from './refusal.js';

const PROOF_NAMESPACE = 'id-jag-dpop-jti';
/** How far a proof's `iat` may be from now (RFC 9449 §11.1: a short window). */
const IAT_WINDOW = 60;

export interface DpopBindingOptions {
  enabled: boolean;
  requireNonce: boolean;
  algorithms: string[];
  /** The token endpoint URL a proof's `htu` must name. */
  tokenEndpoint: string;
  kv: KeyValueStore;
}

/** The key the tokens are bound to. */
export interface DpopBinding {
  /** JWK thumbprint of the proof's key: the access token's `cnf.jkt`. */
  jkt: string;
  /**
   * The refresh token is bound to the key as well: the assertion demanded it (`cnf.jkt`), so
   * the binding is the IdP's, not the client's to drop or change at a refresh. Without that,
   * RFC 9449 §5 leaves a confidential client's refresh token bound by its authentication only
   * (and every client of this grant is confidential).
   */
  bindsRefreshToken: boolean;
}

/**
 * RFC 9449 §5.2: a client registered with `dpop_bound_access_tokens: true` is refused without a
 * proof. Checked before the assertion is verified (which uses up its `jti`), so that the
 * client's retry with a proof can present the same ID-JAG.
 */
export function requireProofOfBoundClient(proof: string | undefined, dpopBoundAccessTokens: unknown, options: DpopBindingOptions): void {
  if (dpopBoundAccessTokens === true && (!proof || !options.enabled)) {
    refuse(
      'invalid_dpop_proof',
      'dpop_required',
      'this client is registered with dpop_bound_access_tokens: the token request needs a DPoP proof (RFC 9449 §5.2)',
    );
  }
}

/**
 * The key an ID-JAG's `cnf` (RFC 7800 §3.1) binds it to, or undefined without `cnf`. The draft
 * (Sender Constraining Tokens: "ID-JAG Contains `cnf` Claim but DPoP Proof is Not Presented")
 * refuses any `cnf` without a proof, and compares the proof's key with `cnf.jkt` only: a
 * confirmation method this server cannot check (RFC 7800 `jwk`, `jwe`, `jku`, `kid`; mTLS
 * `x5t#S256`; anything else) is refused, never dropped, or the assertion would be redeemed as
 * a bearer assertion by whoever holds it.
 */
function boundKey(cnf: unknown): string | undefined {
  if (cnf === undefined) return undefined;
  if (!cnf || typeof cnf !== 'object' || Array.isArray(cnf))
    refuse('invalid_grant', 'cnf_unsupported', 'the assertion has a cnf claim that is not a JSON object (RFC 7800 §3.1)');
  const members = Object.keys(cnf as object);
  if (members.length !== 1 || members[0] !== 'jkt')
    refuse(
      'invalid_grant',
      'cnf_unsupported',
      'the assertion is bound by a confirmation method this server cannot enforce: only cnf.jkt (DPoP, RFC 9449 §6.1) is supported',
    );
  const { jkt } = cnf as { jkt: unknown };
  if (typeof jkt !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(jkt))
    refuse('invalid_grant', 'cnf_unsupported', 'the assertion cnf.jkt is not a JWK SHA-256 thumbprint (RFC 9449 §6.1)');
  return jkt as string;
}

/** The key to bind the tokens to, or undefined for Bearer tokens. */
export async function dpopBinding(
  proof: string | undefined,
  cnf: unknown,
  options: DpopBindingOptions,
  now: number,
): Promise<DpopBinding | undefined> {
  const required = boundKey(cnf);
  if (!proof || !options.enabled) {
    if (required !== undefined) refuse('invalid_grant', 'cnf', 'proof of possession required for this authorization grant (draft §8.6.2)');
    return undefined;
  }
  if (options.requireNonce) {
    refuse(
      'invalid_dpop_proof',
      'dpop_nonce',
      'DPoP nonces are required here but not available to the JWT bearer grant: send it without DPoP',
    );
  }
  let header: { jwk?: JWK };
  let payload: Record<string, unknown>;
  try {
    const verified = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: options.algorithms });
    header = verified.protectedHeader as { jwk?: JWK };
    payload = verified.payload as Record<string, unknown>;
  } catch {
    return refuse('invalid_dpop_proof', 'dpop', 'the DPoP proof is not a valid dpop+jwt signed by its embedded key (RFC 9449 §4.3)');
  }
  const htu = typeof payload.htu === 'string' ? payload.htu.replace(/[?#].*$/, '') : undefined;
  if (payload.htm !== 'POST' || htu !== options.tokenEndpoint)
    refuse('invalid_dpop_proof', 'dpop', 'the DPoP proof is not for POST to this token endpoint (RFC 9449 §4.3)');
  if (typeof payload.iat !== 'number' || Math.abs(now - payload.iat) > IAT_WINDOW)
    refuse('invalid_dpop_proof', 'dpop', 'the DPoP proof iat is not recent (RFC 9449 §4.3)');
  if (typeof payload.jti !== 'string' || !payload.jti) refuse('invalid_dpop_proof', 'dpop', 'the DPoP proof has no jti (RFC 9449 §4.2)');
  const jkt = await calculateJwkThumbprint(header.jwk!);
  const key = createHash('sha256')
    .update(`${jkt}\u0000${String(payload.jti)}`)
    .digest('base64url');
  if ((await options.kv.increment(PROOF_NAMESPACE, key, 1, IAT_WINDOW * 2 + 1)) !== 1)
    refuse('invalid_dpop_proof', 'dpop', 'the DPoP proof has already been used (RFC 9449 §11.1)');
  if (required !== undefined && required !== jkt)
    refuse('invalid_grant', 'cnf', 'the DPoP key is not the one the assertion is bound to (draft §8.6.2)');
  return { jkt, bindsRefreshToken: required !== undefined };
}
