/**
 * RFC 7515 §7.1 JWS compact serialization, `header.payload.signature`, with every segment in the
 * base64url alphabet and unpadded (RFC 7515 §2): the one structural check of a JWT before it is
 * decoded or verified. jose's decoder is more lenient (it skips whitespace inside a segment, for
 * one), and a signature over the exact text is no reason to accept other spellings of it.
 *
 * The signature may be empty, as in an unsecured JWS (RFC 7519 §6): a caller that refuses
 * `alg: none` can then say so. Where a signature is required in any case (a DPoP proof), test
 * for the empty segment too.
 */
export const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * A compact JWS in its one spelling: {@link JWS_COMPACT} with the signature in canonical base64url
 * ({@link isCanonicalBase64url}). The signature may be empty, as {@link JWS_COMPACT} allows, so a
 * caller can still report `alg: none` as such; jose would verify other spellings of the text.
 */
export function isCanonicalCompactJws(text: string): boolean {
  return JWS_COMPACT.test(text) && isCanonicalBase64url(text.slice(text.lastIndexOf('.') + 1));
}

/**
 * {@link isCanonicalCompactJws} with a signature that is not empty: for texts that are always
 * signed, such as DPoP proofs (RFC 9449 §4.2).
 */
export function isCanonicalSignedJws(text: string): boolean {
  return !text.endsWith('.') && isCanonicalCompactJws(text);
}

const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Whether `segment` is the canonical unpadded base64url spelling of some bytes (RFC 4648 §3.5):
 * a length that encodes whole bytes, and the unused low bits of the last character zero. Decoders
 * (Node's `Buffer`, `atob`, jose) ignore those bits, so without this test one signature has up to
 * 16 spellings that all verify: test a JWS signature segment with it before trusting the token's
 * text as the token's identity.
 */
export function isCanonicalBase64url(segment: string): boolean {
  if (!BASE64URL.test(segment)) return false;
  const tail = segment.length % 4;
  if (tail === 0) return true;
  if (tail === 1) return false;
  const last = BASE64URL_ALPHABET.indexOf(segment[segment.length - 1]!);
  // 2 characters carry 1 byte (4 bits unused), 3 carry 2 bytes (2 bits unused)
  return (last & (tail === 2 ? 0b1111 : 0b11)) === 0;
}

/**
 * The asymmetric JWS algorithms (RFC 7518 §3.1, RFC 8037) a verifier of our kind accepts by
 * default: never `none`, never HMAC (RFC 8725 §3.1-3.2: a verifier holding no shared secret).
 */
export const ASYMMETRIC_JWS_ALGORITHMS: readonly string[] = Object.freeze([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]);
