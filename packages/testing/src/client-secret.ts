/**
 * Confidential-client authentication at the token endpoints of the kit's loopback servers (the
 * test IdP, the third-party provider): `client_secret_basic` or `client_secret_post`
 * (RFC 6749 §2.3.1), never both in one request (§2.3: "MUST NOT use more than one
 * authentication method in each request").
 */
import { timingSafeEqual } from 'node:crypto';

export type ClientCredentials =
  | { kind: 'none' }
  /** More than one method, or a Basic header that does not decode: `invalid_request` / `invalid_client`. */
  | { kind: 'malformed'; method: 'client_secret_basic' | 'both' }
  | { kind: 'secret'; method: 'client_secret_basic' | 'client_secret_post'; clientId: string; secret: string };

/** What the request presents: the Basic header (form-encoded id and secret, §2.3.1) or the body fields. */
export function readClientCredentials(authorization: string | undefined, body: URLSearchParams): ClientCredentials {
  const posted = body.get('client_secret');
  const basic = authorization !== undefined && /^basic /i.test(authorization);
  if (basic && posted !== null) return { kind: 'malformed', method: 'both' };
  if (basic) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0) return { kind: 'malformed', method: 'client_secret_basic' };
    try {
      const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
      // A client_id in the body as well must name the same client.
      const named = body.get('client_id');
      if (named !== null && named !== clientId) return { kind: 'malformed', method: 'both' };
      return { kind: 'secret', method: 'client_secret_basic', clientId, secret };
    } catch {
      return { kind: 'malformed', method: 'client_secret_basic' };
    }
  }
  const clientId = body.get('client_id');
  if (posted !== null && clientId !== null) return { kind: 'secret', method: 'client_secret_post', clientId, secret: posted };
  return { kind: 'none' };
}

/** Constant-time comparison of a presented secret with the registered one. */
export function sameSecret(presented: string, registered: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(registered);
  return a.length === b.length && timingSafeEqual(a, b);
}
