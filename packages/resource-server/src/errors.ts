/**
 * Internal reasons a request is refused. They are logged (never sent); {@link reasonToWire}
 * collapses each one into a registered OAuth error code so the wire never says which check failed.
 */
export type RejectionReason =
  | 'missing_credentials'
  | 'malformed_authorization_header'
  | 'unsupported_authorization_scheme'
  | 'token_in_query'
  | 'token_in_body'
  | 'token_malformed'
  | 'token_too_large'
  | 'alg_not_allowed'
  | 'typ_invalid'
  | 'signature_invalid'
  | 'unknown_kid'
  | 'keys_unavailable'
  | 'iss_untrusted'
  | 'aud_mismatch'
  | 'expired'
  | 'not_yet_valid'
  | 'missing_claim'
  | 'claim_invalid'
  | 'opaque_token_unsupported'
  | 'introspection_inactive'
  | 'introspection_failed'
  | 'introspection_mismatch'
  | 'grant_revoked'
  | 'insufficient_scope'
  | 'origin_forbidden'
  | 'host_forbidden'
  | 'internal_error'
  // RFC 9449 (DPoP)
  | 'dpop_proof_missing'
  | 'dpop_proof_multiple'
  | 'dpop_proof_malformed'
  | 'dpop_typ_invalid'
  | 'dpop_alg_not_allowed'
  | 'dpop_jwk_invalid'
  | 'dpop_jwk_private'
  | 'dpop_signature_invalid'
  | 'dpop_claim_invalid'
  | 'dpop_htm_mismatch'
  | 'dpop_htu_mismatch'
  | 'dpop_iat_invalid'
  | 'dpop_ath_mismatch'
  | 'dpop_replayed'
  | 'dpop_nonce_required'
  | 'dpop_nonce_invalid'
  | 'dpop_key_mismatch'
  | 'dpop_token_not_bound'
  | 'dpop_bound_token_as_bearer'
  | 'dpop_required'
  | 'sender_constraint_unsupported';

/** Registered codes we may put on the wire (RFC 6750 §3.1, RFC 9449 §7.1 and §9). */
export type BearerErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'invalid_dpop_proof' | 'use_dpop_nonce';

/**
 * Seconds a client is told to wait (`Retry-After`) when the authorization server's keys or
 * introspection endpoint cannot be reached: long enough for the key store's failure cooldown.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export interface WireError {
  status: 400 | 401 | 403 | 500 | 503;
  /** Absent when no credentials were presented (RFC 6750 §3.1: no error information then). */
  error?: BearerErrorCode;
  description: string;
  /** `true` for the DNS-rebinding guards: not an OAuth error, answered with a JSON-RPC body. */
  transport?: boolean;
  /**
   * `true` when the middleware itself failed (a bug, not the request): 500 `server_error`, no
   * challenge, so a server fault never sends every client back to sign in.
   */
  server?: boolean;
  /**
   * `true` when the token could not be checked because the authorization server (its JWKS,
   * metadata or introspection endpoint) did not answer: 503 with `Retry-After` and no challenge.
   * An `invalid_token` challenge here would tell every client to discard its tokens and sign in
   * again during an outage of the AS, which cannot succeed either.
   */
  unavailable?: boolean;
}

const INVALID_TOKEN: WireError = { status: 401, error: 'invalid_token', description: 'The access token is invalid' };
const INVALID_DPOP_PROOF: WireError = { status: 401, error: 'invalid_dpop_proof', description: 'The DPoP proof is invalid' };
const USE_DPOP_NONCE: WireError = { status: 401, error: 'use_dpop_nonce', description: 'Resource server requires nonce in DPoP proof' };
const DPOP_KEY_BINDING: WireError = { status: 401, error: 'invalid_token', description: 'Invalid DPoP key binding' };
const SENDER_CONSTRAINED: WireError = { status: 401, error: 'invalid_token', description: 'The access token is sender-constrained' };
const AS_UNREACHABLE: WireError = {
  status: 503,
  description: 'The access token cannot be verified now (the authorization server is unreachable); retry later',
  unavailable: true,
};
const BAD_AUTHORIZATION: WireError = {
  status: 400,
  error: 'invalid_request',
  description: 'The Authorization header must be "Bearer <token>"',
};

/**
 * Wire shape of every internal reason. A `Record` over {@link RejectionReason}: adding a reason
 * without its row fails to compile.
 */
const WIRE: Readonly<Record<RejectionReason, WireError>> = {
  missing_credentials: { status: 401, description: 'This resource requires a bearer access token' },
  malformed_authorization_header: BAD_AUTHORIZATION,
  unsupported_authorization_scheme: BAD_AUTHORIZATION,
  token_in_query: {
    status: 400,
    error: 'invalid_request',
    description: 'Access tokens must be sent in the Authorization header, never in the URI',
  },
  token_in_body: {
    status: 400,
    error: 'invalid_request',
    description: 'Access tokens must be sent in the Authorization header, never in the body',
  },
  expired: { status: 401, error: 'invalid_token', description: 'The access token expired' },
  keys_unavailable: AS_UNREACHABLE,
  introspection_failed: AS_UNREACHABLE,
  token_malformed: INVALID_TOKEN,
  token_too_large: INVALID_TOKEN,
  alg_not_allowed: INVALID_TOKEN,
  typ_invalid: INVALID_TOKEN,
  signature_invalid: INVALID_TOKEN,
  unknown_kid: INVALID_TOKEN,
  iss_untrusted: INVALID_TOKEN,
  aud_mismatch: INVALID_TOKEN,
  not_yet_valid: INVALID_TOKEN,
  missing_claim: INVALID_TOKEN,
  claim_invalid: INVALID_TOKEN,
  opaque_token_unsupported: INVALID_TOKEN,
  introspection_inactive: INVALID_TOKEN,
  introspection_mismatch: INVALID_TOKEN,
  grant_revoked: INVALID_TOKEN,
  internal_error: { status: 500, description: 'The resource server failed to process the request', server: true },
  insufficient_scope: { status: 403, error: 'insufficient_scope', description: 'The access token lacks the scope this request needs' },
  dpop_proof_missing: INVALID_DPOP_PROOF,
  dpop_proof_multiple: INVALID_DPOP_PROOF,
  dpop_proof_malformed: INVALID_DPOP_PROOF,
  dpop_typ_invalid: INVALID_DPOP_PROOF,
  dpop_alg_not_allowed: INVALID_DPOP_PROOF,
  dpop_jwk_invalid: INVALID_DPOP_PROOF,
  dpop_jwk_private: INVALID_DPOP_PROOF,
  dpop_signature_invalid: INVALID_DPOP_PROOF,
  dpop_claim_invalid: INVALID_DPOP_PROOF,
  dpop_htm_mismatch: INVALID_DPOP_PROOF,
  dpop_htu_mismatch: INVALID_DPOP_PROOF,
  dpop_iat_invalid: INVALID_DPOP_PROOF,
  dpop_ath_mismatch: INVALID_DPOP_PROOF,
  dpop_replayed: INVALID_DPOP_PROOF,
  dpop_nonce_required: USE_DPOP_NONCE,
  dpop_nonce_invalid: USE_DPOP_NONCE,
  dpop_key_mismatch: DPOP_KEY_BINDING,
  dpop_token_not_bound: DPOP_KEY_BINDING,
  dpop_bound_token_as_bearer: SENDER_CONSTRAINED,
  sender_constraint_unsupported: SENDER_CONSTRAINED,
  dpop_required: { status: 401, error: 'invalid_token', description: 'This resource requires a DPoP-bound access token' },
  origin_forbidden: { status: 403, description: 'Forbidden: Origin not allowed', transport: true },
  host_forbidden: { status: 403, description: 'Forbidden: Host not allowed', transport: true },
};

/** The wire shape of `reason` (a copy: the table's rows are shared by reasons). */
export function reasonToWire(reason: RejectionReason): WireError {
  return { ...WIRE[reason] };
}

/**
 * A refused request. `reason` and `detail` are private (log them); only {@link reasonToWire}
 * of `reason` (plus `scope` for `insufficient_scope`) reaches the client.
 */
export class ResourceServerError extends Error {
  readonly reason: RejectionReason;
  readonly status: 400 | 401 | 403 | 500 | 503;
  readonly error: BearerErrorCode | undefined;
  readonly description: string;
  /** Scopes the request needs (challenge `scope`), set for `insufficient_scope`. */
  readonly scope: readonly string[] | undefined;
  /** Private diagnostics (expected/actual values). Never contains the token. */
  readonly detail: Readonly<Record<string, unknown>> | undefined;

  constructor(reason: RejectionReason, options: { detail?: Record<string, unknown>; scope?: readonly string[]; cause?: unknown } = {}) {
    const wire = WIRE[reason];
    super(wire.error ?? reason, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ResourceServerError';
    this.reason = reason;
    this.status = wire.status;
    this.error = wire.error;
    this.description = wire.description;
    this.scope = options.scope;
    this.detail = options.detail;
  }

  get transport(): boolean {
    return WIRE[this.reason].transport === true;
  }

  get server(): boolean {
    return WIRE[this.reason].server === true;
  }

  get unavailable(): boolean {
    return WIRE[this.reason].unavailable === true;
  }
}
