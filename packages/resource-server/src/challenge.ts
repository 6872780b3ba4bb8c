import type { BearerErrorCode } from './errors.js';

export interface ChallengeParams {
  /** URL of the RFC 9728 metadata document (RFC 9728 §5.1). */
  resourceMetadata?: string;
  /** Scopes the request needs (RFC 6750 §3); space-joined on the wire. */
  scope?: readonly string[] | string;
  error?: BearerErrorCode;
  errorDescription?: string;
  realm?: string;
  /** Authentication scheme of the challenge (default `Bearer`; `DPoP` per RFC 9449 §7.1). */
  scheme?: 'Bearer' | 'DPoP';
  /** RFC 9449 §7.1 `algs`: the JWS algorithms accepted for DPoP proofs (DPoP challenges only). */
  algs?: readonly string[];
}

// RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E (plus `"` and `\` once escaped
// as quoted-pairs); scope-token is %x21 / %x23-5B / %x5D-7E. Anything else (CR, LF, controls,
// non-ASCII) is replaced so the header can never be split or rejected by Node's header check.
const NOT_VISIBLE_ASCII_OR_SPACE = /[^\x20-\x7e]/g;
const NOT_SCOPE_TOKEN_CHAR = /[^\x21\x23-\x5b\x5d-\x7e]/;

/** Wraps a value as an RFC 9110 quoted-string, escaping `\` and `"` and replacing non-printables. */
export function quoteValue(value: string): string {
  return `"${value.replace(NOT_VISIBLE_ASCII_OR_SPACE, '?').replace(/[\\"]/g, '\\$&')}"`;
}

/** `true` when `scope` is a valid RFC 6749 §3.3 scope-token. */
export function isScopeToken(scope: string): boolean {
  return scope.length > 0 && !NOT_SCOPE_TOKEN_CHAR.test(scope);
}

/**
 * Builds a `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3, RFC 9728 §5.1), or a `DPoP …`
 * one (RFC 9449 §7.1, with `algs`) when `scheme` is `DPoP`.
 * With no `error`, no `error_description` is emitted either (RFC 6750 §3.1: a request without
 * credentials gets no error information).
 */
export function buildChallenge(params: ChallengeParams): string {
  const parts: string[] = [];
  if (params.realm !== undefined) parts.push(`realm=${quoteValue(params.realm)}`);
  if (params.error !== undefined) {
    parts.push(`error=${quoteValue(params.error)}`);
    if (params.errorDescription !== undefined) {
      parts.push(`error_description=${quoteValue(params.errorDescription)}`);
    }
  }
  const scopes = typeof params.scope === 'string' ? params.scope.split(' ') : (params.scope ?? []);
  const validScopes = scopes.filter(isScopeToken);
  if (validScopes.length > 0) parts.push(`scope=${quoteValue(validScopes.join(' '))}`);
  if (params.resourceMetadata !== undefined) {
    parts.push(`resource_metadata=${quoteValue(params.resourceMetadata)}`);
  }
  const scheme = params.scheme ?? 'Bearer';
  if (scheme === 'DPoP' && params.algs !== undefined && params.algs.length > 0) {
    parts.push(`algs=${quoteValue(params.algs.filter(isScopeToken).join(' '))}`);
  }
  return parts.length > 0 ? `${scheme} ${parts.join(', ')}` : scheme;
}
