/**
 * The checks of RFC 7523 §3 on a client's own JWT bearer assertion (RFC 7523 §2.1, the
 * recommended credential of the MCP client credentials extension), in this order:
 *
 *  1. the JWS compact serialization, exactly (RFC 7515 §7.1);
 *  2. `typ` absent or `JWT`: never an ID-JAG, a DPoP proof, an access token (RFC 8725 §3.11);
 *  3. the signature, by a key the client registered (`jwks` / `jwks_uri`), with an asymmetric
 *     algorithm (item 9; never `none`, never HMAC: the AS holds no secret key of the client's);
 *  4. `iss` and `sub` are the client's id (items 1, 2.B; the extension: "iss: Client ID, sub:
 *     Client ID");
 *  5. `aud` is this server, as its issuer or its token endpoint, alone (item 3; a list could
 *     carry the same assertion to another server);
 *  6. `exp` present, not passed, and at most the maximum lifetime ahead (item 4, "short");
 *     `nbf` (item 5) and `iat` (item 6) when present;
 *  7. `jti` present and never seen before (item 7: the AS may demand it; replay detection in
 *     the store every instance shares).
 *
 * Pure apart from the key lookup and the replay store, both passed in; the clock is passed in.
 */
import { compactVerify, decodeJwt, decodeProtectedHeader, errors as joseErrors, type JWTVerifyGetKey } from 'jose';
import { ASYMMETRIC_JWS_ALGORITHMS, isCanonicalCompactJws } from '@mcp-auth-kit/protocol';
import { GrantRefusal, refuse } from '../refusal.js';
import { isClientAssertionTyp } from './assertion-typ.js';
import { checkAssertionTimes } from './assertion-times.js';

/** Asymmetric JWS algorithms a client may sign its assertions with (RFC 7518 §3.1, RFC 8037). */
export const CLIENT_ASSERTION_ALGORITHMS: readonly string[] = ASYMMETRIC_JWS_ALGORITHMS;
/** The longest lifetime accepted (`exp` − now, now − `iat`), in seconds: "short" (RFC 7523 §3 item 4, RFC 7521 §8.2). */
export const CLIENT_ASSERTION_MAX_LIFETIME = 300;
/** Clock skew accepted on `exp`, `nbf` and `iat`, in seconds. */
export const CLIENT_ASSERTION_CLOCK_TOLERANCE = 30;

export interface ClientAssertionCheckInput {
  assertion: string;
  /** The client the request is from (authenticated, or identified by this very assertion). */
  clientId: string;
  /** This server's issuer identifier and token endpoint URL: the audiences accepted. */
  issuer: string;
  tokenEndpoint: string;
  keys: JWTVerifyGetKey;
  algorithms: readonly string[];
  /** Epoch seconds. */
  now: number;
  /** Records the `jti` for `ttlSeconds`; false when it was already recorded (a replay). */
  firstUse(clientId: string, jti: string, ttlSeconds: number): Promise<boolean>;
}

export interface ClientAssertionClaims {
  iss: string;
  sub: string;
  aud: string | string[];
  exp: number;
  jti: string;
  iat?: number;
  nbf?: number;
  [claim: string]: unknown;
}

function checkShapeAndTyp(assertion: string): void {
  let header: { typ?: unknown } = {};
  try {
    if (!isCanonicalCompactJws(assertion)) throw new TypeError('not the JWS compact serialization');
    header = decodeProtectedHeader(assertion);
    decodeJwt(assertion);
  } catch {
    refuse('invalid_grant', 'malformed', 'the assertion is not a signed JWT (RFC 7523 §3)');
  }
  if (!isClientAssertionTyp(header))
    refuse('invalid_grant', 'typ', 'a client assertion has no typ or typ "JWT": this JWT is of another kind (RFC 8725 §3.11)');
}

async function verifySignature(input: ClientAssertionCheckInput): Promise<unknown> {
  try {
    const { payload } = await compactVerify(input.assertion, input.keys, { algorithms: [...input.algorithms] });
    return JSON.parse(new TextDecoder().decode(payload));
  } catch (err) {
    if (err instanceof joseErrors.JOSEAlgNotAllowed)
      return refuse('invalid_grant', 'alg', `the assertion must be signed with one of ${input.algorithms.join(', ')} (RFC 7523 §3 item 9)`);
    const bad =
      err instanceof joseErrors.JWSSignatureVerificationFailed ||
      err instanceof joseErrors.JWKSNoMatchingKey ||
      err instanceof joseErrors.JWKSMultipleMatchingKeys ||
      err instanceof joseErrors.JWSInvalid ||
      err instanceof joseErrors.JOSENotSupported ||
      err instanceof SyntaxError;
    if (bad)
      return refuse(
        'invalid_grant',
        'signature',
        "the assertion's signature does not verify with the client's registered keys (RFC 7523 §3 item 9)",
      );
    // The client's jwks_uri could not be fetched or read: not a verdict on the assertion.
    throw new GrantRefusal('temporarily_unavailable', "the client's registered keys could not be obtained; try again later", 'jwks', {
      cause: err,
    });
  }
}

function checkParties(claims: ClientAssertionClaims, input: ClientAssertionCheckInput): void {
  if (claims.iss !== input.clientId)
    refuse('invalid_grant', 'iss', "the assertion's iss must be the client's client_id (RFC 7523 §3 item 1)");
  if (claims.sub !== input.clientId)
    refuse('invalid_grant', 'sub', "the assertion's sub must be the client's client_id (RFC 7523 §3 item 2.B)");
  const single = Array.isArray(claims.aud) && claims.aud.length === 1 ? claims.aud[0] : claims.aud;
  if (single !== input.issuer && single !== input.tokenEndpoint)
    refuse(
      'invalid_grant',
      'aud',
      `the assertion's aud must be this server, alone: ${input.issuer} or ${input.tokenEndpoint} (RFC 7523 §3 item 3)`,
    );
}

async function checkTimesAndReplay(claims: ClientAssertionClaims, input: ClientAssertionCheckInput): Promise<void> {
  const { now } = input;
  const skew = CLIENT_ASSERTION_CLOCK_TOLERANCE;
  checkAssertionTimes(claims, { now, skew, maxAge: CLIENT_ASSERTION_MAX_LIFETIME, iatRequired: false, iatRule: 'RFC 7523 §3 item 6' });
  if (typeof claims.jti !== 'string' || !claims.jti)
    refuse('invalid_grant', 'jti', 'the assertion has no jti: this server needs one to refuse replays (RFC 7523 §3 item 7)');
  // Remembered until the assertion could no longer pass the exp check anyway.
  const ttl = Math.max(1, Math.ceil(claims.exp + skew - now));
  if (!(await input.firstUse(input.clientId, claims.jti, ttl)))
    refuse('invalid_grant', 'replay', 'the assertion has already been used (RFC 7523 §3 item 7: jti replay)');
}

/** Runs every check in order; throws a {@link GrantRefusal} at the first that fails. */
export async function verifyClientAssertion(input: ClientAssertionCheckInput): Promise<ClientAssertionClaims> {
  checkShapeAndTyp(input.assertion);
  const payload = await verifySignature(input);
  if (!payload || typeof payload !== 'object' || Array.isArray(payload))
    refuse('invalid_grant', 'malformed', 'the assertion payload is not a JSON object (RFC 7519 §7.2)');
  const claims = payload as ClientAssertionClaims;
  checkParties(claims, input);
  await checkTimesAndReplay(claims, input);
  return claims;
}
