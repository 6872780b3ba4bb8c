/**
 * What kind of assertion a JWT bearer grant request carries, told by its JOSE `typ` header (RFC
 * 8725 §3.11, explicit typing): an ID-JAG (`oauth-id-jag+jwt`, MCP enterprise-managed
 * authorization) or a client's own assertion (RFC 7523 §2.1, MCP client credentials), which has
 * no `typ` or the generic `JWT`. One rule for both paths, so neither accepts the other's JWTs.
 */
import { decodeProtectedHeader } from 'jose';
import { ID_JAG_TYP } from './constants.js';

/** `typ` as compared (RFC 7515 §4.1.9: case-insensitive, `application/` may be omitted); undefined when absent. */
export function normalizedTyp(header: { typ?: unknown }): string | undefined {
  return typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : undefined;
}

/** Whether the assertion declares itself an ID-JAG; false for anything unreadable (its path refuses it). */
export function isIdJagTyped(assertion: unknown): boolean {
  if (typeof assertion !== 'string') return false;
  try {
    return normalizedTyp(decodeProtectedHeader(assertion)) === ID_JAG_TYP;
  } catch {
    return false;
  }
}

/** A client's own assertion carries no `typ` or the generic `JWT` (RFC 7519 §5.1); any other type is another kind of JWT. */
export function isClientAssertionTyp(header: { typ?: unknown }): boolean {
  const typ = normalizedTyp(header);
  return header.typ === undefined || typ === 'jwt';
}
