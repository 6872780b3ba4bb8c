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

/** Exhaustive map from internal reason to wire shape; adding a reason without a case fails to compile. */
export function reasonToWire(reason: RejectionReason): WireError {
  switch (reason) {
    case 'missing_credentials':
      return { status: 401, description: 'This resource requires a bearer access token' };
    case 'malformed_authorization_header':
    case 'unsupported_authorization_scheme':
      return {
        status: 400,
        error: 'invalid_request',
        description: 'The Authorization header must be "Bearer <token>"',
      };
    case 'token_in_query':
      return {
        status: 400,
        error: 'invalid_request',
        description: 'Access tokens must be sent in the Authorization header, never in the URI',
      };
    case 'token_in_body':
      return {
        status: 400,
        error: 'invalid_request',
        description: 'Access tokens must be sent in the Authorization header, never in the body',
      };
    case 'expired':
      return { status: 401, error: 'invalid_token', description: 'The access token expired' };
    case 'keys_unavailable':
    case 'introspection_failed':
      return {
        status: 503,
        description: 'The access token cannot be verified now (the authorization server is unreachable); retry later',
        unavailable: true,
      };
    case 'token_malformed':
    case 'token_too_large':
    case 'alg_not_allowed':
    case 'typ_invalid':
    case 'signature_invalid':
    case 'unknown_kid':
    case 'iss_untrusted':
    case 'aud_mismatch':
    case 'not_yet_valid':
    case 'missing_claim':
    case 'claim_invalid':
    case 'opaque_token_unsupported':
    case 'introspection_inactive':
    case 'introspection_mismatch':
    case 'grant_revoked':
      return { status: 401, error: 'invalid_token', description: 'The access token is invalid' };
    case 'internal_error':
      return { status: 500, description: 'The resource server failed to process the request', server: true };
    case 'insufficient_scope':
      return {
        status: 403,
        error: 'insufficient_scope',
        description: 'The access token lacks the scope this request needs',
      };
    case 'dpop_proof_missing':
    case 'dpop_proof_multiple':
    case 'dpop_proof_malformed':
    case 'dpop_typ_invalid':
    case 'dpop_alg_not_allowed':
    case 'dpop_jwk_invalid':
    case 'dpop_jwk_private':
    case 'dpop_signature_invalid':
    case 'dpop_claim_invalid':
    case 'dpop_htm_mismatch':
    case 'dpop_htu_mismatch':
    case 'dpop_iat_invalid':
    case 'dpop_ath_mismatch':
    case 'dpop_replayed':
      return { status: 401, error: 'invalid_dpop_proof', description: 'The DPoP proof is invalid' };
    case 'dpop_nonce_required':
    case 'dpop_nonce_invalid':
      return { status: 401, error: 'use_dpop_nonce', description: 'Resource server requires nonce in DPoP proof' };
    case 'dpop_key_mismatch':
    case 'dpop_token_not_bound':
      return { status: 401, error: 'invalid_token', description: 'Invalid DPoP key binding' };
    case 'dpop_bound_token_as_bearer':
    case 'sender_constraint_unsupported':
      return { status: 401, error: 'invalid_token', description: 'The access token is sender-constrained' };
    case 'dpop_required':
      return { status: 401, error: 'invalid_token', description: 'This resource requires a DPoP-bound access token' };
    case 'origin_forbidden':
      return { status: 403, description: 'Forbidden: Origin not allowed', transport: true };
    case 'host_forbidden':
      return { status: 403, description: 'Forbidden: Host not allowed', transport: true };
  }
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
    const wire = reasonToWire(reason);
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
    return reasonToWire(this.reason).transport === true;
  }

  get server(): boolean {
    return reasonToWire(this.reason).server === true;
  }

  get unavailable(): boolean {
    return reasonToWire(this.reason).unavailable === true;
  }
}
