/**
 * Values an authorization server sends that a client stores or echoes: checked here, once, so
 * they are data in whatever form every consumer expects (see terminal-text.ts for printing).
 */

/** Longest issuer identifier accepted (a URL; browsers and servers commonly cap URLs near 2 KiB). */
export const MAX_ISSUER_LENGTH = 2048;

const WHITESPACE_OR_INVISIBLE = /[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;

/**
 * Why an issuer identifier is refused, or undefined when it is in canonical form. RFC 8414 §2: an
 * https URL with no query or fragment (http is left to the caller's transport policy, which allows
 * it for loopback only). RFC 8414 §3.3 compares issuers as plain strings, but the URL parser drops
 * TAB, LF and CR and trims C0 and spaces: `https://as.example/\tx` would fetch the metadata of
 * `https://as.example/x` and still match its own string. So the string must be its own parsed and
 * serialised form (a bare origin may omit the final `/`) and hold no whitespace or invisible character.
 */
export function issuerProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return 'is not a non-empty string';
  if (value.length > MAX_ISSUER_LENGTH) return `is longer than ${MAX_ISSUER_LENGTH} characters`;
  if (WHITESPACE_OR_INVISIBLE.test(value)) return 'contains whitespace, a control or an invisible character';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'is not an https URL';
  if (url.username || url.password) return 'has user information';
  if (url.search || value.includes('?')) return 'has a query';
  if (url.hash || value.includes('#')) return 'has a fragment';
  const canonical = url.href;
  if (value !== canonical && !(url.pathname === '/' && `${value}/` === canonical)) {
    return `is not in canonical form (${canonical})`;
  }
  return undefined;
}

/** True when {@link issuerProblem} finds nothing. */
export function isCanonicalIssuer(value: unknown): value is string {
  return issuerProblem(value) === undefined;
}

/** RFC 6749 §5.2 / §4.1.2.1: `error` = 1*( %x20-21 / %x23-5B / %x5D-7E ). */
const ERROR_CODE = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;
/** Longest `error` code kept; registered codes are a few dozen characters. */
export const MAX_ERROR_CODE_LENGTH = 100;
/** What a malformed `error` code is replaced with (not a registered code, so no branch acts on it). */
export const MALFORMED_ERROR_CODE = '(malformed error code)';

/**
 * An AS `error` code as the client keeps and shows it: the code when it is in the RFC 6749 §5.2
 * charset and not too long, else {@link MALFORMED_ERROR_CODE} (a code with a newline or an escape
 * sequence is never echoed).
 */
export function oauthErrorCode(value: unknown): string {
  return typeof value === 'string' && value.length <= MAX_ERROR_CODE_LENGTH && ERROR_CODE.test(value) ? value : MALFORMED_ERROR_CODE;
}

/** Longest `error_description` kept, in characters. */
export const MAX_ERROR_DESCRIPTION_LENGTH = 300;

/**
 * An AS `error_description` as the client keeps it: a string, cut to
 * {@link MAX_ERROR_DESCRIPTION_LENGTH} characters; undefined otherwise. Printing escapes what it
 * holds (visibleText): RFC 6749 §5.2 restricts its charset, but deployed servers send quotes and
 * non-ASCII text that is worth showing.
 */
export function oauthErrorDescription(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return value.length > MAX_ERROR_DESCRIPTION_LENGTH ? `${value.slice(0, MAX_ERROR_DESCRIPTION_LENGTH)}…` : value;
}

/** Longest token lifetime taken as the AS says it: one year, in seconds (no access token is trusted to stay valid longer). */
export const MAX_TOKEN_LIFETIME_SECONDS = 31_536_000;

/**
 * An `expires_in` (RFC 6749 §5.1) as whole seconds within [0, {@link MAX_TOKEN_LIFETIME_SECONDS}]:
 * a larger value is capped (`1e300` would make an expiry no date can show); anything that is not a
 * finite non-negative number is undefined (no expiry said).
 */
export function tokenLifetime(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined;
  return Math.min(Math.floor(value), MAX_TOKEN_LIFETIME_SECONDS);
}

/**
 * RFC 6750 §2.1 b64token (also RFC 9449 §7.1 for DPoP): `1*( ALPHA / DIGIT / "-" / "." / "_" / "~"
 * / "+" / "/" ) *"="`. An access token outside it (CR, LF, spaces) cannot travel in an
 * Authorization header, and is refused without being echoed.
 */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** True when `value` is an RFC 6750 b64token. */
export function isAccessTokenSyntax(value: unknown): value is string {
  return typeof value === 'string' && B64TOKEN.test(value);
}
