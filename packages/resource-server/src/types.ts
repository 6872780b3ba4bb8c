/** A validated access token, independent of any framework. */
export interface VerifiedAccessToken {
  token: string;
  /** `jwt` (RFC 9068, verified locally) or `introspection` (RFC 7662). */
  source: 'jwt' | 'introspection';
  issuer: string | undefined;
  subject: string | undefined;
  clientId: string;
  jti: string | undefined;
  scopes: string[];
  /** `exp`, seconds since the epoch. */
  expiresAt: number;
  /** Canonical resource URI of this server (the audience that was checked). */
  resource: string;
  /** All claims (JWT payload or introspection response). */
  claims: Record<string, unknown>;
}

/**
 * The MCP SDK `AuthInfo` shape (`@modelcontextprotocol/server` and `@modelcontextprotocol/sdk`),
 * set as `req.auth`; SDK transports hand it to tool handlers as `extra.authInfo`.
 */
export interface McpAuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  resource?: URL;
  /** SDK v2: the RFC 9728 metadata URL, reused by the SDK's own per-operation scope challenges. */
  resourceMetadataUrl?: string;
  extra?: Record<string, unknown>;
}

/** Minimal logger; receives the private rejection reason and details, never a token. */
export interface ResourceServerLogger {
  debug?(message: string, details?: Record<string, unknown>): void;
  info?(message: string, details?: Record<string, unknown>): void;
  warn?(message: string, details?: Record<string, unknown>): void;
  /**
   * Metrics hook: called once per protected request with `ok` (token accepted, scopes
   * sufficient) or the refusal reason. Never receives a token; a throwing hook is ignored.
   */
  onValidation?(outcome: import('./validation-hook.js').ValidationOutcome): void;
}

/** A JSON-RPC message as far as the scope policy cares. */
export interface JsonRpcMessageLike {
  method?: unknown;
  params?: unknown;
}

// `protect` sets `req.auth` on express's Request (4 and 5 share these types), typed as the MCP
// SDK's own `AuthInfo` augmentation: the member list is the SDK v2 `AuthInfo`, so both
// declarations merge when an app also imports @modelcontextprotocol/express.
declare module 'express-serve-static-core' {
  interface Request {
    /** The validated access token, set by `protect` (MCP SDK `AuthInfo` shape). */
    auth?: McpAuthInfo;
  }
}
