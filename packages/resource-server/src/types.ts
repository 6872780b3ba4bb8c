/**
 * The package's shared types (leaf module: it imports nothing of ours but a type from the
 * import-free errors.ts), so feature modules and config/types.ts depend on it and never on each other.
 */
import type { RejectionReason } from './errors.js';

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
  onValidation?(outcome: ValidationOutcome): void;
}

/** What `ResourceServerLogger.onValidation` receives: one call per protected request. */
export type ValidationOutcome = { ok: true; source: 'jwt' | 'introspection' } | { ok: false; reason: RejectionReason; status: number };

/** Validates access tokens for one resource: cache, then JWT (RFC 9068) or introspection (RFC 7662). */
export interface AccessTokenVerifier {
  /** @throws {ResourceServerError} 401 `invalid_token` family. */
  verify(token: string): Promise<VerifiedAccessToken>;
  /**
   * The cached answer for `token`, synchronously (no promise, no I/O), or `undefined` (not cached,
   * cache off). A wrapper that adds checks to {@link verify} must add them here too or leave this
   * out: callers fall back to `verify` when it is missing. `connection`: the request's socket,
   * when there is one (its last token's hash is reused, see `ConnectionTokenHashes`).
   */
  cached?(token: string, connection?: object): VerifiedAccessToken | undefined;
  /** Drops cached tokens, metadata and keys. */
  clear(): void;
  /** Entries in the validated-token cache (0 when turned off). */
  readonly cacheSize: number;
}

/** How the access token was presented. */
export type TokenScheme = 'bearer' | 'dpop';

/** One request, as {@link ResourceServerCore.authenticate} needs it (framework-neutral). */
export interface AuthenticateRequest {
  /** The raw `Authorization` header value. */
  authorization: string | undefined;
  /** Every `DPoP` header field value (an array when the header was repeated). */
  dpop?: string | readonly string[] | undefined;
  /** HTTP method as received. */
  method: string;
  /** Request target (path + query): an `access_token` query parameter is refused. */
  url?: string;
  /** `true` when a form body carried `access_token` (refused). */
  tokenInBody?: boolean;
}

/** A request whose credentials are valid (scope not yet checked). */
export interface AuthenticatedRequest {
  verified: VerifiedAccessToken;
  scheme: TokenScheme;
  /** Thumbprint of the key a DPoP-bound token is bound to. */
  jkt?: string;
  /** A fresh nonce to send as `DPoP-Nonce` on the response (RFC 9449 §8.2). */
  dpopNonce?: string;
}

/** Binding of a request to its token, for {@link ResourceServerCore.toAuthInfo}. */
export interface RequestBinding {
  scheme: TokenScheme;
  jkt?: string | undefined;
}

/**
 * Where seen DPoP proof `jti`s are remembered (RFC 9449 §11.1). Several resource-server instances
 * behind one balancer should share one store (e.g. Redis `SET key 1 NX PXAT expiresAt`); the
 * default is per process.
 */
export interface DpopReplayStore {
  /**
   * Records `key` until `expiresAt` (ms since the epoch). Returns `false` when the key is already
   * recorded and not expired (a replay). Must be atomic: two concurrent calls with one key never
   * both return `true`.
   */
  add(key: string, expiresAt: number): boolean | Promise<boolean>;
}

/**
 * Grants revoked before their tokens expire, as this process knows them. Asked on every request
 * (cache hits included), so `isRevoked` must answer from memory: a Set or Map lookup, never I/O.
 * Filled from a shared channel (`@mcp-auth-kit/resource-server/redis`) or by the application.
 */
export interface RevocationList {
  isRevoked(grantId: string): boolean;
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
