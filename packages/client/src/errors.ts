/**
 * Library error codes (on `.code`). OAuth error codes sent by a server stay on `.error`.
 */
export const ERR = {
  /** A `WWW-Authenticate` header could not be parsed. */
  WWW_AUTHENTICATE_PARSE: 'MCP_AUTH_WWW_AUTHENTICATE_PARSE',
  /**
   * A server did not answer at all (connection refused, timeout, DNS failure, TLS failure): the MCP
   * server, or the authorization server it names. `cause` holds the network error.
   */
  SERVER_UNREACHABLE: 'MCP_AUTH_SERVER_UNREACHABLE',
  /** The server answered, but no Protected Resource Metadata document was found (RFC 9728; e.g. HTTP 404). */
  PRM_NOT_FOUND: 'MCP_AUTH_PRM_NOT_FOUND',
  /** The PRM document is malformed (not JSON, missing `resource` or `authorization_servers`). */
  PRM_INVALID: 'MCP_AUTH_PRM_INVALID',
  /** The PRM `resource` does not identify the MCP server that was called (RFC 9728 §3.3). */
  PRM_RESOURCE_MISMATCH: 'MCP_AUTH_PRM_RESOURCE_MISMATCH',
  /** The authorization server answered, but with no metadata at any well-known URL (e.g. HTTP 404). */
  AS_METADATA_NOT_FOUND: 'MCP_AUTH_AS_METADATA_NOT_FOUND',
  /** The AS metadata is malformed. */
  AS_METADATA_INVALID: 'MCP_AUTH_AS_METADATA_INVALID',
  /** The AS metadata `issuer` differs from the issuer identifier (RFC 8414 §3.3). */
  AS_ISSUER_MISMATCH: 'MCP_AUTH_AS_ISSUER_MISMATCH',
  /** The AS does not advertise PKCE S256 (`code_challenge_methods_supported`). */
  PKCE_NOT_SUPPORTED: 'MCP_AUTH_PKCE_NOT_SUPPORTED',
  /** A URL is not allowed: not https (http only for loopback), or a scheme like `javascript:`. */
  URL_FORBIDDEN: 'MCP_AUTH_URL_FORBIDDEN',
  /** Pre-registered credentials exist, but for another authorization server. */
  AS_MISMATCH: 'MCP_AUTH_AS_MISMATCH',
  /** No way to obtain a client_id for this authorization server. */
  REGISTRATION_UNAVAILABLE: 'MCP_AUTH_REGISTRATION_UNAVAILABLE',
  /** Dynamic Client Registration was refused by the authorization server. */
  REGISTRATION_REJECTED: 'MCP_AUTH_REGISTRATION_REJECTED',
  /** The authorization response failed validation (state, RFC 9207 `iss`). */
  AUTHORIZATION_RESPONSE_INVALID: 'MCP_AUTH_AUTHORIZATION_RESPONSE_INVALID',
  /** The authorization server answered the authorization request with an error (iss validated). */
  AUTHORIZATION_DENIED: 'MCP_AUTH_AUTHORIZATION_DENIED',
  /** Waiting for the authorization callback timed out or was aborted. */
  AUTHORIZATION_TIMEOUT: 'MCP_AUTH_AUTHORIZATION_TIMEOUT',
  /** The token endpoint answered with an error or a malformed response. */
  TOKEN_REQUEST_FAILED: 'MCP_AUTH_TOKEN_REQUEST_FAILED',
  /** Step-up authorization was attempted too often for the same resource and scope set. */
  STEP_UP_LIMIT: 'MCP_AUTH_STEP_UP_LIMIT',
  /** Interactive authorization is needed but the client is configured without a way to open URLs. */
  INTERACTION_REQUIRED: 'MCP_AUTH_INTERACTION_REQUIRED',
  /**
   * A server's response was larger than the client accepts (`maxResponseBytes`): a metadata
   * document, registration or token response that big is hostile or broken.
   */
  RESPONSE_TOO_LARGE: 'MCP_AUTH_RESPONSE_TOO_LARGE',
  /** The file store refuses its directory, file or lock (owned by someone else, open to others, a symlink). */
  STORE_UNSAFE: 'MCP_AUTH_STORE_UNSAFE',
  /** Another live process held the file store's lock for longer than the wait (`lockWaitMs`). */
  STORE_BUSY: 'MCP_AUTH_STORE_BUSY',
  /**
   * The client refused an MCP server's URL elicitation without asking the user: the URL is not
   * https (http only to a loopback host), carries credentials, is malformed or too long, or the
   * elicitation itself is malformed. Nothing was opened.
   */
  ELICITATION_REFUSED: 'MCP_AUTH_ELICITATION_REFUSED',
  /** The user declined a URL elicitation the request needs (the request was not retried). */
  ELICITATION_DECLINED: 'MCP_AUTH_ELICITATION_DECLINED',
  /** The user dismissed a URL elicitation the request needs without choosing (the request was not retried). */
  ELICITATION_CANCELLED: 'MCP_AUTH_ELICITATION_CANCELLED',
  /** The MCP server still asked for a URL elicitation after the bounded number of retries. */
  ELICITATION_LIMIT: 'MCP_AUTH_ELICITATION_LIMIT',
  /** A caller passed a bad argument. */
  INVALID_ARGUMENT: 'MCP_AUTH_INVALID_ARGUMENT',
} as const;

export type McpAuthErrorCode = (typeof ERR)[keyof typeof ERR];

export interface McpAuthErrorOptions {
  cause?: unknown;
  /** OAuth `error` code reported by a server, when there is one. */
  error?: string;
  /** OAuth `error_description` reported by a server (only kept after issuer validation). */
  error_description?: string;
  status?: number;
}

/** Every error thrown by this library. `code` is one of {@link ERR}; `error` is the server's OAuth code. */
export class McpAuthError extends Error {
  readonly code: McpAuthErrorCode;
  readonly error?: string;
  readonly error_description?: string;
  readonly status?: number;
  constructor(code: McpAuthErrorCode, message: string, options: McpAuthErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'McpAuthError';
    this.code = code;
    if (options.error !== undefined) this.error = options.error;
    if (options.error_description !== undefined) this.error_description = options.error_description;
    if (options.status !== undefined) this.status = options.status;
  }
}
