import { ASYMMETRIC_JWS_ALGORITHMS, isCanonicalBase64url, JWS_COMPACT } from '@mcp-auth-kit/protocol';
import { errors, type CompactJWSHeaderParameters, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { MetadataError } from './as-metadata.js';
import { ResourceServerError, type RejectionReason } from './errors.js';
import { audienceIncludes } from './resource-uri.js';
import { isCryptoKey, type MemoizedKeySet } from './key-memo.js';
import type { VerifiedAccessToken } from './types.js';
import { verifyJwsSignature } from './jws-signature.js';
import { DEFAULTS } from './config/defaults.js';

/** Asymmetric JWS algorithms accepted by default (never `none`, never HMAC). */
export const DEFAULT_ALGORITHMS: readonly string[] = Object.freeze([...ASYMMETRIC_JWS_ALGORITHMS]);

/** RFC 9068 §2.2 claims plus `client_id`, all required. */
export const REQUIRED_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'] as const;

export interface JwtVerifyOptions {
  /** Canonical resource URI this server is (the expected audience). */
  resource: string;
  /** Trusted issuers (exact strings, RFC 8414 §3.3). */
  issuers: readonly string[];
  /** Resolves the verification keys of an issuer (typically its JWKS). */
  getKeys: (issuer: string) => JWTVerifyGetKey | Promise<JWTVerifyGetKey>;
  algorithms?: readonly string[];
  /** Seconds of leeway for `exp`/`nbf` (default 30). */
  clockTolerance?: number;
  /** Current time in ms (default `Date.now`). */
  now?: () => number;
}

/**
 * Validates a JWT access token (RFC 9068 §4) in this order: the compact serialization
 * ({@link JWS_COMPACT}) with a signature in canonical base64url, JWS header `alg` in the
 * asymmetric allowlist, `typ` = `at+jwt`, no `crit`, `iss` one of the configured issuers (all of
 * these before any network I/O), signature with the issuer's keys (see {@link verifyWithKeys}),
 * then the claims (RFC 7519 §4.1, RFC 9068 §2.2): required claims present,
 * `exp`/`nbf` with tolerance, `aud` contains `resource` (canonical comparison, see
 * {@link audienceIncludes}).
 *
 * The claims are read once, from the decode made before the signature check: the signature is
 * verified over the token's own base64url text, which is what that decode read, so the claims
 * checked are the signed ones. (jose's `jwtVerify` would decode and parse the payload a second
 * time: with the cache off, where this runs for every request, that would be most of what this
 * function adds to a bare verification.)
 *
 * Does NOT check scope (that is the caller's policy), `jti` replay, or DPoP binding.
 * @throws {ResourceServerError} with a private `reason` and a 401 `invalid_token` wire code.
 */
export function verifyJwtAccessToken(token: string, options: JwtVerifyOptions): Promise<VerifiedAccessToken> {
  if (!JWS_COMPACT.test(token)) {
    return Promise.reject(new ResourceServerError('token_malformed', { detail: { check: 'compact serialization' } }));
  }
  return verifyCompactJwt(token, options);
}

/**
 * {@link verifyJwtAccessToken} for a token that already matched {@link JWS_COMPACT}: the verifier
 * tests the shape to tell JWTs from opaque tokens, so this entry does not scan the token's
 * segments a second time on every verification.
 */
export function verifyCompactJwt(token: string, options: JwtVerifyOptions): Promise<VerifiedAccessToken> {
  // Not async: with the cache off this runs for every request, and the only promise it adds to
  // the signature check's is the `then` that checks the claims (a warm key store answers synchronously).
  try {
    const algorithms = options.algorithms ?? DEFAULT_ALGORITHMS;
    let header: Record<string, unknown>;
    let payload: JWTPayload;
    try {
      ({ header, payload } = decodeUnverified(token));
    } catch (cause) {
      throw new ResourceServerError('token_malformed', { cause });
    }
    if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) {
      throw new ResourceServerError('alg_not_allowed', { detail: { alg: header.alg } });
    }
    if (typeof header.typ !== 'string' || normalizeTyp(header.typ) !== 'at+jwt') {
      throw new ResourceServerError('typ_invalid', { detail: { typ: header.typ } });
    }
    // RFC 7797 unencoded payloads are not JWTs (RFC 7797 §7): the claims would not be the decode above
    if (header.b64 !== undefined) {
      throw new ResourceServerError('token_malformed', { detail: { header: 'b64' } });
    }
    // RFC 7515 §4.1.11: an extension the recipient must understand, and no extension is understood here
    if (header.crit !== undefined) {
      throw new ResourceServerError('token_malformed', { detail: { header: 'crit' } });
    }
    const issuer = payload.iss;
    if (typeof issuer !== 'string' || !options.issuers.includes(issuer)) {
      throw new ResourceServerError(issuer === undefined ? 'missing_claim' : 'iss_untrusted', {
        detail: { claim: 'iss', expected: options.issuers, actual: issuer },
      });
    }

    let keys: ReturnType<JwtVerifyOptions['getKeys']>;
    try {
      keys = options.getKeys(issuer);
    } catch (cause) {
      throw keysError(cause, issuer);
    }
    if (typeof keys === 'function') return verifyWithKeys(token, header, payload, issuer, keys, options);
    return keys.then(
      (getKey) => verifyWithKeys(token, header, payload, issuer, getKey, options),
      (cause: unknown) => {
        throw keysError(cause, issuer);
      },
    );
  } catch (err) {
    return Promise.reject(err);
  }
}

function keysError(cause: unknown, issuer: string): ResourceServerError {
  const reason = isKeyFetchFailure(cause) ? 'keys_unavailable' : 'internal_error';
  return new ResourceServerError(reason, { cause, detail: { issuer, ...detailOf(cause) } });
}

/**
 * The signature ({@link verifyJwsSignature}, the one path for every key: RFC 7515 §5.2, the key
 * checked against `alg`), then the claims of the payload decoded before it.
 */
function verifyWithKeys(
  token: string,
  header: Record<string, unknown>,
  payload: JWTPayload,
  issuer: string,
  getKey: JWTVerifyGetKey,
  options: JwtVerifyOptions,
): Promise<VerifiedAccessToken> {
  const firstDot = token.indexOf('.');
  const lastDot = token.lastIndexOf('.');
  let resolved: unknown;
  try {
    // The issuer's key set may already know the key for this alg + kid (see key-memo.ts): the
    // same key, the same checks, without resolving it again.
    resolved = (getKey as Partial<MemoizedKeySet>).cached?.(header);
    resolved ??= getKey(header as CompactJWSHeaderParameters, {
      protected: token.slice(0, firstDot),
      payload: token.slice(firstDot + 1, lastDot),
      signature: token.slice(lastDot + 1),
    });
  } catch (cause) {
    return Promise.reject(mapJoseError(cause, issuer));
  }
  const mapped = (cause: unknown): never => {
    throw mapJoseError(cause, issuer);
  };
  // `alg` was checked against the allowlist before any key was asked (see the header checks)
  const withKey = (key: unknown): Promise<VerifiedAccessToken> =>
    verifyJwsSignature(header.alg as string, key, token.slice(0, lastDot), token.slice(lastDot + 1)).then((valid) => {
      if (!valid) throw mapJoseError(new errors.JWSSignatureVerificationFailed(), issuer);
      return checkedClaims(token, issuer, payload, options);
    }, mapped);
  if (isCryptoKey(resolved)) return withKey(resolved);
  return Promise.resolve(resolved).then(withKey, mapped);
}

/**
 * RFC 9068 §2.2 / RFC 7519 §4.1 on a payload whose signature was verified. `iss` was compared
 * with the trusted issuers before any key was fetched, on this same payload.
 */
function checkedClaims(token: string, issuer: string, payload: JWTPayload, options: JwtVerifyOptions): VerifiedAccessToken {
  for (const claim of REQUIRED_CLAIMS) {
    if (!Object.hasOwn(payload, claim)) {
      throw new ResourceServerError('missing_claim', { detail: { issuer, claim, check: 'missing' } });
    }
  }
  for (const claim of ['exp', 'iat'] as const) {
    if (typeof payload[claim] !== 'number' || !Number.isFinite(payload[claim])) {
      throw new ResourceServerError('claim_invalid', { detail: { issuer, claim, check: 'invalid' } });
    }
  }
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || !Number.isFinite(payload.nbf))) {
    throw new ResourceServerError('claim_invalid', { detail: { issuer, claim: 'nbf', check: 'invalid' } });
  }
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  const tolerance = options.clockTolerance ?? DEFAULTS.clockTolerance;
  if (payload.nbf !== undefined && payload.nbf > now + tolerance) {
    throw new ResourceServerError('not_yet_valid', { detail: { issuer, claim: 'nbf', check: 'check_failed' } });
  }
  const expiresAt = payload.exp as number;
  if (expiresAt <= now - tolerance) {
    throw new ResourceServerError('expired', { detail: { issuer, claim: 'exp', check: 'check_failed' } });
  }
  if (!audienceIncludes(payload.aud, options.resource)) {
    throw new ResourceServerError('aud_mismatch', {
      detail: { expected: options.resource, actual: payload.aud },
    });
  }
  for (const claim of ['sub', 'jti', 'client_id'] as const) {
    if (typeof payload[claim] !== 'string' || payload[claim] === '') {
      throw new ResourceServerError('claim_invalid', { detail: { claim } });
    }
  }
  if (payload.scope !== undefined && typeof payload.scope !== 'string') {
    throw new ResourceServerError('claim_invalid', { detail: { claim: 'scope' } });
  }

  return {
    token,
    source: 'jwt',
    issuer,
    subject: payload.sub as string,
    clientId: payload.client_id as string,
    jti: payload.jti as string,
    scopes: splitScope(payload.scope),
    expiresAt,
    resource: options.resource,
    claims: payload as Record<string, unknown>,
  };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
// JSON's whitespace and the printable ASCII range
const PRINTABLE_ASCII = /^[\t\n\r -~]*$/;

/**
 * Header and claims of a compact JWS, not yet verified: read before any key is fetched (`alg`,
 * `typ`, trusted `iss`, key selection) and, once the signature is verified over the same
 * base64url text, the claims that are checked and returned. Invalid UTF-8 is refused, as jose
 * refuses it.
 */
function decodeUnverified(token: string): { header: Record<string, unknown>; payload: JWTPayload } {
  const parts = token.split('.');
  if (parts.length !== 3) throw new TypeError('not a JWS compact serialization');
  // decoders ignore the unused bits of the last character: other spellings of a signature that verifies
  if (!isCanonicalBase64url(parts[2]!)) throw new TypeError('signature not in canonical base64url');
  return { header: jsonSegment(parts[0]!), payload: jsonSegment(parts[1]!) as JWTPayload };
}

/** One segment of a token that matched {@link JWS_COMPACT} (atob would skip whitespace: it is not there). */
function jsonSegment(segment: string): Record<string, unknown> {
  if (segment.length % 4 === 1) throw new TypeError('invalid base64url: impossible length');
  // atob, not Buffer: a Buffer per segment and a fatal UTF-8 decoder each cost microseconds per
  // token under load (allocations the collector must then reclaim), a string next to nothing. atob's string holds one byte per
  // character, so printable ASCII, as JOSE headers and claims almost always are, is already the
  // text; anything else is decoded as UTF-8.
  const bytes = atob(segment.replaceAll('-', '+').replaceAll('_', '/'));
  const text = PRINTABLE_ASCII.test(bytes) ? bytes : UTF8.decode(Buffer.from(bytes, 'latin1'));
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError('not a JSON object');
  return value as Record<string, unknown>;
}

/** RFC 9068 §4 allows `application/at+jwt` as well; media types are case-insensitive. */
function normalizeTyp(typ: string): string {
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

export function splitScope(scope: unknown): string[] {
  if (typeof scope !== 'string') return [];
  return [...new Set(scope.split(' ').filter((s) => s !== ''))];
}

function detailOf(cause: unknown): Record<string, unknown> {
  if (cause instanceof Error) {
    const detail = (cause as { detail?: Record<string, unknown> }).detail;
    return { message: cause.message, ...(detail ?? {}) };
  }
  return {};
}

/** Network and metadata failures while fetching the issuer's keys (fetch, abort, timeout). */
function isKeyFetchFailure(cause: unknown): boolean {
  if (cause instanceof MetadataError) return true;
  if (!(cause instanceof Error)) return false;
  if (cause.name === 'AbortError' || cause.name === 'TimeoutError') return true;
  return cause instanceof TypeError && cause.message === 'fetch failed';
}

function mapJoseError(cause: unknown, issuer: string): ResourceServerError {
  let reason: RejectionReason = 'internal_error';
  let detail: Record<string, unknown> = { issuer };
  if (cause instanceof errors.JWSSignatureVerificationFailed) {
    reason = 'signature_invalid';
  } else if (cause instanceof errors.JWKSNoMatchingKey) {
    reason = 'unknown_kid';
  } else if (cause instanceof errors.JWKSMultipleMatchingKeys) {
    reason = 'signature_invalid';
  } else if (cause instanceof errors.JOSEAlgNotAllowed || cause instanceof errors.JOSENotSupported) {
    reason = 'alg_not_allowed';
  } else if (cause instanceof errors.JWKSTimeout || cause instanceof errors.JWKSInvalid) {
    reason = 'keys_unavailable';
  } else if (cause instanceof errors.JWSInvalid || cause instanceof errors.JWKInvalid) {
    reason = 'token_malformed';
  } else if (cause instanceof errors.JOSEError) {
    // the base class is what jose throws for a JWKS response that is not 200 OK
    reason = cause.code === 'ERR_JOSE_GENERIC' ? 'keys_unavailable' : 'token_malformed';
  } else if (isKeyFetchFailure(cause)) {
    reason = 'keys_unavailable';
  }
  // anything else is a fault of this code, not of the token: internal_error (500, logged)
  if (cause instanceof Error) detail = { ...detail, message: cause.message };
  return new ResourceServerError(reason, { cause, detail });
}
