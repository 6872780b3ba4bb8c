/**
 * Why {@link ThirdPartyTokenError} was thrown. The OAuth codes are the token endpoint's answer to
 * the RFC 8693 exchange (RFC 6749 §5.2, RFC 8693 §2.2.2); the others are found here:
 * - `access_denied`: the user declined the connect prompt (a 2026-07-28 retry said so);
 * - `temporarily_unavailable`: the authorization server did not answer (network, timeout, 5xx);
 * - `invalid_response`: its answer was not usable (not JSON, no token, a connect URL elsewhere);
 * - `not_configured`: no third-party configuration applies to this request (see `thirdPartyToken`).
 * Any other code the authorization server sent is kept as it came (RFC 6749 §5.2 charset only).
 */
export type ThirdPartyErrorCode =
  | 'interaction_required'
  | 'invalid_client'
  | 'unauthorized_client'
  | 'invalid_grant'
  | 'invalid_target'
  | 'access_denied'
  | 'temporarily_unavailable'
  | 'invalid_response'
  | 'not_configured'
  | (string & {});

/**
 * A third-party token could not be had. `message` is written here, for the person using the tool
 * (a tool error shows it): it never holds a token, a secret or text the authorization server
 * chose. `code` says why (see {@link ThirdPartyErrorCode}).
 */
export class ThirdPartyTokenError extends Error {
  override readonly name: string = 'ThirdPartyTokenError';
  /** Why (see {@link ThirdPartyErrorCode}). */
  readonly code: ThirdPartyErrorCode;
  /** The provider asked for (its short name at the authorization server, e.g. `drive`). */
  readonly provider: string;
  /** HTTP status of the token endpoint's answer, when there was one. */
  readonly status: number | undefined;

  constructor(code: ThirdPartyErrorCode, provider: string, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.provider = provider;
    this.status = options.status;
  }
}

/**
 * The user has not connected the provider's account (or the connection was revoked): the
 * authorization server answered `interaction_required` with a connect URL bound to this user,
 * this provider and this MCP server. `withThirdPartyAuthorization` turns it into a URL-mode
 * elicitation on the wire the MCP client speaks.
 */
export class ThirdPartyAuthorizationRequiredError extends ThirdPartyTokenError {
  override readonly name: string = 'ThirdPartyAuthorizationRequiredError';
  /** The authorization server's connect page for this user (single use, short-lived). */
  readonly url: string;
  /** Seconds the URL stays usable, when the authorization server said. */
  readonly expiresIn: number | undefined;
  /** The provider's name as users know it (display-safe), else its short name. */
  readonly providerDisplayName: string;
  /** A fresh identifier of this elicitation (2025-11-25 `elicitationId`, 2026-07-28 `requestState`). */
  readonly elicitationId: string;

  constructor(init: {
    provider: string;
    providerDisplayName: string;
    url: string;
    expiresIn: number | undefined;
    elicitationId: string;
    status?: number;
  }) {
    super('interaction_required', init.provider, `Connect your ${init.providerDisplayName} account to continue`, {
      ...(init.status !== undefined ? { status: init.status } : {}),
    });
    this.url = init.url;
    this.expiresIn = init.expiresIn;
    this.providerDisplayName = init.providerDisplayName;
    this.elicitationId = init.elicitationId;
  }
}
