/**
 * Refusals of the ID-JAG grant: the RFC 6749 §5.2 / RFC 8707 §2 code and a public description
 * the client can act on, plus a short stable `reason` for the audit log and metrics.
 */
import { errors } from 'oidc-provider';

export type IdJagErrorCode =
  | 'invalid_request'
  | 'invalid_grant'
  | 'invalid_client'
  | 'unauthorized_client'
  | 'invalid_target'
  | 'invalid_scope'
  | 'invalid_dpop_proof'
  | 'temporarily_unavailable';

export class IdJagRefusal extends Error {
  constructor(
    readonly error: IdJagErrorCode,
    /** Public: sent as `error_description`. Never carries the assertion or personal data. */
    readonly description: string,
    /** Stable short name of the failed check (audit `reason`). */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${error}: ${description}`, options);
    this.name = 'IdJagRefusal';
  }
}

export const refuse = (error: IdJagErrorCode, reason: string, description: string): never => {
  throw new IdJagRefusal(error, description, reason);
};

/** The oidc-provider error that renders the refusal at the token endpoint. */
export function providerError(refusal: IdJagRefusal): Error & { error_description?: string } {
  const classes = {
    invalid_request: errors.InvalidRequest,
    invalid_grant: errors.InvalidGrant,
    invalid_client: errors.InvalidClient,
    unauthorized_client: errors.UnauthorizedClient,
    invalid_target: errors.InvalidTarget,
    invalid_scope: errors.InvalidScope,
    invalid_dpop_proof: errors.InvalidDpopProof,
    temporarily_unavailable: errors.TemporarilyUnavailable,
  } as const;
  const Klass = classes[refusal.error] as unknown as new (description?: string) => Error & { error_description?: string };
  const error = new Klass(refusal.description);
  // InvalidGrant ignores its argument (fixed description): set it on every class alike.
  error.error_description = refusal.description;
  return error;
}
