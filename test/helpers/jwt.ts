import { decodeJwt, decodeProtectedHeader } from 'jose';

/** Header and claims of an access token, for asserting RFC 9068 shape (no verification). */
export function inspectAccessToken(token: string) {
  return { header: decodeProtectedHeader(token), claims: decodeJwt(token) };
}
