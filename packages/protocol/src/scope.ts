/**
 * Scope grammar (RFC 6749 §3.3): `scope = scope-token *( SP scope-token )`,
 * `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
 */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** True when `value` is one valid scope-token. */
export function isScopeToken(value: unknown): value is string {
  return typeof value === 'string' && SCOPE_TOKEN.test(value);
}

/**
 * The scope-tokens of a space-delimited scope value, de-duplicated in order. Runs of white space
 * count as one separator, so a sloppy peer's `"a  b"` still reads as two tokens.
 */
export function splitScope(value: string | undefined): string[] {
  return value ? [...new Set(value.split(/\s+/).filter(Boolean))] : [];
}
