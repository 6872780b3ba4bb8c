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
