/**
 * Refusals of the grants registered here (ID-JAG, token exchange): the RFC 6749 §5.2 / RFC 8707 §2
 * / RFC 8693 §2.2.2 code and a public description the client can act on, plus a short stable
 * `reason` for the audit log and metrics, and members some answers add to the error body.
 */
import { errors } from 'oidc-provider';

export type GrantErrorCode =
  | 'invalid_request'
  | 'invalid_grant'
  | 'invalid_client'
  | 'unauthorized_client'
  | 'invalid_target'
  | 'invalid_scope'
  | 'invalid_dpop_proof'
  | 'interaction_required'
  | 'temporarily_unavailable';

export class GrantRefusal extends Error {
  constructor(
    readonly error: GrantErrorCode,
    /** Public: sent as `error_description`. Never carries a token, an assertion or personal data. */
    readonly description: string,
    /** Stable short name of the failed check (audit `reason`). */
    readonly reason: string,
    options?: { cause?: unknown; extra?: Record<string, unknown> },
  ) {
    super(`${error}: ${description}`, options);
    this.name = 'GrantRefusal';
    this.extra = options?.extra;
  }

  /** Members of the error body besides `error` and `error_description` (e.g. the connect URL). */
  readonly extra: Record<string, unknown> | undefined;
}

export const refuse = (error: GrantErrorCode, reason: string, description: string): never => {
  throw new GrantRefusal(error, description, reason);
};

/** The extra body members of an oidc-provider error made by {@link providerError}. */
const extras = new WeakMap<Error, Record<string, unknown>>();
export const extraMembers = (error: unknown): Record<string, unknown> | undefined =>
  error instanceof Error ? extras.get(error) : undefined;

/** The oidc-provider error that renders the refusal at the token endpoint. */
export function providerError(refusal: GrantRefusal): Error & { error_description?: string } {
  const classes = {
    invalid_request: errors.InvalidRequest,
    invalid_grant: errors.InvalidGrant,
    invalid_client: errors.InvalidClient,
    unauthorized_client: errors.UnauthorizedClient,
    invalid_target: errors.InvalidTarget,
    invalid_scope: errors.InvalidScope,
    invalid_dpop_proof: errors.InvalidDpopProof,
    interaction_required: errors.InteractionRequired,
    temporarily_unavailable: errors.TemporarilyUnavailable,
  } as const;
  const Klass = classes[refusal.error] as unknown as new (description?: string) => Error & { error_description?: string };
  const error = new Klass(refusal.description);
  // InvalidGrant ignores its argument (fixed description): set it on every class alike.
  error.error_description = refusal.description;
  if (refusal.extra) extras.set(error, refusal.extra);
  return error;
}
