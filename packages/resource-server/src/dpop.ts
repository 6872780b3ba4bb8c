import { createHash } from 'node:crypto';
import { isCanonicalSignedJws } from '@mcp-auth-kit/protocol';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors,
  jwtVerify,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import { ResourceServerError, type RejectionReason } from './errors.js';
import type { DpopNonces } from './dpop-nonce.js';
import { ProofKeyMemo } from './proof-keys.js';

/** Asymmetric JWS algorithms accepted for DPoP proofs by default (RFC 9449 §4.2: never `none` or MAC). */
export const DEFAULT_DPOP_PROOF_ALGORITHMS: readonly string[] = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'PS256',
  'PS384',
  'PS512',
  'RS256',
  'RS384',
  'RS512',
];

/** Largest proof we spend work on (a proof with an RSA-4096 key is about 1.5 KiB). */
export const MAX_DPOP_PROOF_LENGTH = 8192;

/** JWK members that only a private (or symmetric) key has (RFC 7518 §6). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * Public keys of proofs that verified, shared by every resource server of the process: what a
 * JWK imports to under an `alg` does not depend on the server's configuration.
 */
const proofKeys = new ProofKeyMemo();

export interface DpopProofRequest {
  /** Every `DPoP` header field value received (RFC 9449 §4.3 check 1: exactly one). */
  proofs: readonly string[];
  /** HTTP method of the request, as received. */
  method: string;
  /** The access token of the `Authorization: DPoP` header (checked against `ath`). */
  accessToken: string;
}

export interface DpopProofOptions {
  /** Accepted JWS algorithms (asymmetric only). */
  algorithms: readonly string[];
  /** Acceptable `htu` values, already normalised with {@link normalizeHtu}. */
  htu: readonly string[];
  /** How old a proof may be (seconds since its `iat`). */
  maxAgeSeconds: number;
  /** Leeway in seconds for clocks, on both sides of the window. */
  clockToleranceSeconds: number;
  /** Server nonces (RFC 9449 §9); when set, every proof must carry a valid one. */
  nonces?: DpopNonces | undefined;
  /** Clock in ms. */
  now: () => number;
}

/** A proof that passed RFC 9449 §4.3 (except replay, which is recorded once the token is bound). */
export interface VerifiedDpopProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's public key (compared with `cnf.jkt`). */
  jkt: string;
  jti: string;
  /** `iat`, seconds since the epoch. */
  iat: number;
  /** Until when (ms) the proof's `jti` must be remembered. */
  replayUntil: number;
  /** A new nonce to hand out (`DPoP-Nonce`), when the proof's nonce is about to expire. */
  nextNonce?: string;
}

function refuse(reason: RejectionReason, detail?: Record<string, unknown>, cause?: unknown): ResourceServerError {
  return new ResourceServerError(reason, {
    ...(detail !== undefined ? { detail } : {}),
    ...(cause !== undefined ? { cause } : {}),
  });
}

/**
 * RFC 9449 §4.3 `htu` comparison form: query and fragment removed, then RFC 3986 §6.2.2
 * normalisation (scheme and host lower case, default port and dot segments removed by the WHATWG
 * parser; percent-encoded unreserved characters decoded, other escapes upper-cased).
 * Returns undefined for a value that is not an absolute http(s) URL.
 */
export function normalizeHtu(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  url.search = '';
  url.hash = '';
  url.username = '';
  url.password = '';
  const path = url.pathname.replace(/%[0-9A-Fa-f]{2}/g, (escaped) => {
    const char = String.fromCharCode(Number.parseInt(escaped.slice(1), 16));
    return UNRESERVED.test(char) ? char : escaped.toUpperCase();
  });
  return `${url.origin}${path}`;
}

/** RFC 9449 §4.2 `ath`: base64url(SHA-256(ASCII access token)). */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url');
}

/** The proof's claims once {@link checkProofClaims} passed. */
interface DpopClaims extends JWTPayload {
  jti: string;
  iat: number;
  htm: string;
  htu: string;
}

/** Checks 1 and 2 of RFC 9449 §4.3: exactly one proof, a well-formed signed JWS. */
function singleProof(request: DpopProofRequest): string {
  if (request.proofs.length === 0) throw refuse('dpop_proof_missing');
  if (request.proofs.length > 1) throw refuse('dpop_proof_multiple', { count: request.proofs.length });
  const proof = request.proofs[0]!.trim();
  // a proof is always signed (RFC 9449 §4.2): an empty signature segment is malformed here, and
  // so is a signature in any spelling but the canonical one (decoders would accept several)
  if (proof.length > MAX_DPOP_PROOF_LENGTH || !isCanonicalSignedJws(proof)) {
    throw refuse('dpop_proof_malformed', { length: proof.length });
  }
  return proof;
}

/** Checks 2, 4 and 5: a decodable header with `typ` `dpop+jwt` and an allowed `alg`. */
function proofHeader(proof: string, options: DpopProofOptions): ReturnType<typeof decodeProtectedHeader> & { alg: string } {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(proof);
  } catch (cause) {
    throw refuse('dpop_proof_malformed', undefined, cause);
  }
  if (typeof header.typ !== 'string' || header.typ.toLowerCase() !== 'dpop+jwt') {
    throw refuse('dpop_typ_invalid', { typ: header.typ });
  }
  if (typeof header.alg !== 'string' || !options.algorithms.includes(header.alg)) {
    throw refuse('dpop_alg_not_allowed', { alg: header.alg });
  }
  return header as ReturnType<typeof decodeProtectedHeader> & { alg: string };
}

/** The embedded `jwk`, which must be a public key of a known type (check 7's first half). */
function publicJwk(header: ReturnType<typeof decodeProtectedHeader>): JWK {
  const jwk = header.jwk as JWK | undefined;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk) || !['EC', 'OKP', 'RSA'].includes(String(jwk.kty))) {
    throw refuse('dpop_jwk_invalid', { kty: jwk?.kty });
  }
  const privateMembers = PRIVATE_JWK_MEMBERS.filter((m) => Object.hasOwn(jwk, m));
  if (privateMembers.length > 0) throw refuse('dpop_jwk_private', { members: privateMembers });
  return jwk;
}

/** Check 3 (required claims), then 8 (`htm`) and 9 (`htu`). */
function checkProofClaims(payload: JWTPayload, request: DpopProofRequest, options: DpopProofOptions): asserts payload is DpopClaims {
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) {
    throw refuse('dpop_claim_invalid', { claim: 'jti' });
  }
  if (typeof payload.iat !== 'number' || !Number.isFinite(payload.iat)) throw refuse('dpop_claim_invalid', { claim: 'iat' });
  if (typeof payload.htm !== 'string') throw refuse('dpop_claim_invalid', { claim: 'htm' });
  if (typeof payload.htu !== 'string') throw refuse('dpop_claim_invalid', { claim: 'htu' });

  // RFC 9110 §9.1: methods are case-sensitive
  if (payload.htm !== request.method) {
    throw refuse('dpop_htm_mismatch', { expected: request.method, actual: payload.htm });
  }
  const htu = normalizeHtu(payload.htu);
  if (htu === undefined || !options.htu.includes(htu)) {
    throw refuse('dpop_htu_mismatch', { expected: options.htu, actual: htu ?? 'not an http(s) URL' });
  }
}

/** Check 10: the server nonce when nonces are on; a fresh one to hand out when it is stale. */
function checkProofNonce(payload: JWTPayload, options: DpopProofOptions): string | undefined {
  if (options.nonces === undefined) return undefined;
  if (payload.nonce === undefined) throw refuse('dpop_nonce_required');
  const state = typeof payload.nonce === 'string' ? options.nonces.check(payload.nonce) : 'invalid';
  if (state === 'invalid') throw refuse('dpop_nonce_invalid');
  return state === 'stale' ? options.nonces.current() : undefined;
}

/** Checks 11 (`iat` within the window) and 12 (`ath`). */
function checkProofTimeAndToken(payload: DpopClaims, request: DpopProofRequest, options: DpopProofOptions): void {
  const nowSeconds = options.now() / 1000;
  const tolerance = options.clockToleranceSeconds;
  if (payload.iat > nowSeconds + tolerance || payload.iat < nowSeconds - options.maxAgeSeconds - tolerance) {
    throw refuse('dpop_iat_invalid', { iat: payload.iat, now: Math.floor(nowSeconds) });
  }

  if (payload.ath === undefined) throw refuse('dpop_ath_mismatch', { ath: 'missing' });
  if (payload.ath !== accessTokenHash(request.accessToken)) throw refuse('dpop_ath_mismatch', { ath: 'different' });
}

/**
 * Checks a DPoP proof against RFC 9449 §4.3, in its order: one header (1), a well-formed JWT (2)
 * with the required claims (3), `typ` `dpop+jwt` (4), an allowed asymmetric `alg` (5), a valid
 * signature by the embedded `jwk` (6) which is a public key (7), `htm` (8), `htu` (9), the server
 * nonce when nonces are on (10), `iat` within the window (11) and `ath` (12). Check 13 (the token's
 * `cnf.jkt` equals {@link VerifiedDpopProof.jkt}) and `jti` replay are the caller's, after the
 * token is verified.
 * @throws {ResourceServerError} `invalid_dpop_proof` / `use_dpop_nonce` reasons.
 */
export async function verifyDpopProof(request: DpopProofRequest, options: DpopProofOptions): Promise<VerifiedDpopProof> {
  const proof = singleProof(request);
  const header = proofHeader(proof, options);
  const jwk = publicJwk(header);

  const keyName = ProofKeyMemo.nameOf(header.alg, jwk);
  const remembered = proofKeys.get(keyName);
  let imported: CryptoKey | undefined;
  let payload: JWTPayload;
  try {
    // a remembered key still verifies this proof's signature; only its import is skipped
    const key = remembered?.key ?? (async (...args: Parameters<typeof EmbeddedJWK>) => (imported = await EmbeddedJWK(...args)));
    ({ payload } = await jwtVerify(proof, key, {
      algorithms: [...options.algorithms],
      typ: 'dpop+jwt',
      currentDate: new Date(options.now()),
      clockTolerance: options.clockToleranceSeconds,
    }));
  } catch (cause) {
    if (cause instanceof errors.JWSSignatureVerificationFailed) throw refuse('dpop_signature_invalid', undefined, cause);
    const message = cause instanceof Error ? cause.message : String(cause);
    throw refuse(cause instanceof errors.JWTClaimValidationFailed ? 'dpop_claim_invalid' : 'dpop_jwk_invalid', { message }, cause);
  }
  const entry = remembered ?? (imported !== undefined ? { key: imported } : undefined);
  if (entry !== undefined && remembered === undefined) proofKeys.remember(keyName, entry);

  checkProofClaims(payload, request, options);
  const nextNonce = checkProofNonce(payload, options);
  checkProofTimeAndToken(payload, request, options);

  let jkt = entry?.jkt;
  if (jkt === undefined) {
    jkt = await calculateJwkThumbprint(jwk, 'sha256');
    if (entry !== undefined) entry.jkt = jkt;
  }
  return {
    jkt,
    jti: payload.jti,
    iat: payload.iat,
    replayUntil: (payload.iat + options.maxAgeSeconds + 2 * options.clockToleranceSeconds) * 1000,
    ...(nextNonce !== undefined ? { nextNonce } : {}),
  };
}

/**
 * The key a token is bound to: `cnf.jkt` (RFC 9449 §6), `undefined` for an unconstrained token.
 * @throws {ResourceServerError} `sender_constraint_unsupported` for another confirmation method
 *   (e.g. mTLS `x5t#S256`, which this server cannot check) or a malformed `cnf`.
 */
export function confirmationJkt(claims: Record<string, unknown>): string | undefined {
  const cnf = claims.cnf;
  if (cnf === undefined) return undefined;
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf)) {
    throw refuse('sender_constraint_unsupported', { cnf: typeof cnf });
  }
  const jkt = (cnf as Record<string, unknown>).jkt;
  if (typeof jkt !== 'string' || jkt === '') {
    throw refuse('sender_constraint_unsupported', { cnf: Object.keys(cnf) });
  }
  return jkt;
}
