import { buildChallenge } from '@mcp-auth-kit/protocol';
import { type ResourceServerError, UNAVAILABLE_RETRY_AFTER_SECONDS } from './errors.js';
import { tokenHash } from './token-cache.js';
import type { ResourceServerLogger } from './types.js';
import type { TokenScheme } from './types.js';

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export interface RenderContext {
  resourceMetadataUrl: string;
  /** `scope` for challenges that carry no operation-specific scope (the 401s). */
  defaultScope: readonly string[];
  realm?: string;
  /** Set when DPoP is on: challenges then offer the `DPoP` scheme (RFC 9449 §7.1). */
  dpop?: {
    algorithms: readonly string[];
    /** `false` when DPoP is required: no `Bearer` challenge. */
    bearerAccepted: boolean;
    /** The nonce to send in `DPoP-Nonce` with `use_dpop_nonce`. */
    nonce?: () => string;
  };
}

/**
 * The one place a refusal becomes a response: status, `WWW-Authenticate` (RFC 6750 §3,
 * RFC 9728 §5.1) and a JSON body with the same registered `error` and a safe description.
 * DNS-rebinding refusals get a JSON-RPC error without `id` (Streamable HTTP §Security).
 */
export function renderError(err: ResourceServerError, ctx: RenderContext, request: { scheme?: TokenScheme } = {}): ErrorResponse {
  const headers: Record<string, string> = {
    'cache-control': 'no-store',
    'content-type': 'application/json; charset=utf-8',
  };
  if (err.transport) {
    return { status: err.status, headers, body: { jsonrpc: '2.0', error: { code: -32000, message: err.description } } };
  }
  if (err.server) return { status: err.status, headers, body: { error: 'server_error', error_description: err.description } };
  if (err.unavailable) {
    // RFC 9110 §15.6.4 / §10.2.3: try again later; no challenge, so the client keeps its token
    headers['retry-after'] = String(UNAVAILABLE_RETRY_AFTER_SECONDS);
    return { status: err.status, headers, body: { error: 'temporarily_unavailable', error_description: err.description } };
  }
  const scope = err.scope ?? ctx.defaultScope;
  const common = {
    ...(ctx.realm !== undefined ? { realm: ctx.realm } : {}),
    resourceMetadata: ctx.resourceMetadataUrl,
    scope,
  };
  const errorParams = err.error !== undefined ? { error: err.error, errorDescription: err.description } : {};
  if (ctx.dpop === undefined) {
    headers['www-authenticate'] = buildChallenge({ ...common, ...errorParams });
  } else {
    // RFC 9449 §7.1/§7.2: one challenge per accepted scheme; the error goes on the scheme the
    // request used (DPoP errors and a DPoP-only server: on the DPoP challenge).
    const dpopError =
      !ctx.dpop.bearerAccepted || request.scheme === 'dpop' || err.error === 'invalid_dpop_proof' || err.error === 'use_dpop_nonce';
    const challenges: string[] = [];
    if (ctx.dpop.bearerAccepted) challenges.push(buildChallenge({ ...common, ...(dpopError ? {} : errorParams) }));
    challenges.push(buildChallenge({ ...common, ...(dpopError ? errorParams : {}), scheme: 'DPoP', algs: ctx.dpop.algorithms }));
    headers['www-authenticate'] = challenges.join(', ');
    if (err.error === 'use_dpop_nonce' && ctx.dpop.nonce !== undefined) headers['dpop-nonce'] = ctx.dpop.nonce();
  }
  const body: Record<string, unknown> =
    err.error === undefined ? { error_description: err.description } : { error: err.error, error_description: err.description };
  if (err.error === 'insufficient_scope' && scope.length > 0) body.scope = scope.join(' ');
  return { status: err.status, headers, body };
}

/** Logs a refusal with its private reason; the token appears only as a short hash prefix. */
export function logRejection(logger: ResourceServerLogger | undefined, err: ResourceServerError, token: string | undefined): void {
  if (logger === undefined) return;
  const details: Record<string, unknown> = {
    reason: err.reason,
    status: err.status,
    ...(err.error !== undefined ? { error: err.error } : {}),
    ...(err.detail ?? {}),
  };
  if (token !== undefined) details.token_sha256_prefix = tokenHash(token).slice(0, 12);
  const serious = err.unavailable || err.reason === 'introspection_mismatch' || err.reason === 'internal_error';
  // a request without credentials is the normal first step of discovery: debug, not info
  const log = serious ? (logger.warn ?? logger.info) : err.reason === 'missing_credentials' ? logger.debug : (logger.info ?? logger.debug);
  log?.call(logger, 'mcp-auth-kit resource-server: request refused', details);
}
