import { displaySafeText } from '@mcp-auth-kit/protocol';
import * as oauth from 'oauth4webapi';

/**
 * Which account the authorization server signed in, as it said in the token response. A loopback
 * redirect on a shared host can be raced by another local user who delivers a code of their own
 * (RFC 8252 §8.3, §8.9); the client cannot prevent that, but it can show whose tokens it got, so
 * the user notices an account that is not theirs.
 */
export interface SignedInAccount {
  /** The subject (`sub`) of the account. */
  sub: string;
  /**
   * A display name (`name`, else `preferred_username`) when the AS gave one, made safe to show by
   * the protocol package's `displaySafeText` (at most 100 code points).
   */
  name?: string;
  /**
   * Where it was read: the validated ID Token (OpenID Connect, `openid` granted), else the
   * access token's JWT claims (read, not verified: it came straight from the token endpoint).
   */
  source: 'id_token' | 'access_token';
}

/** Longest `sub` kept: it is shown, not used. */
const MAX_CLAIM_LENGTH = 200;

function claim(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return value.length > MAX_CLAIM_LENGTH ? `${value.slice(0, MAX_CLAIM_LENGTH)}…` : value;
}

function fromClaims(claims: Record<string, unknown>, source: SignedInAccount['source']): SignedInAccount | undefined {
  const sub = claim(claims.sub);
  if (!sub) return undefined;
  // The AS's free text: the one display rule (white space runs made one space, invisibles and mark
  // stacks dropped, bounded) before any application shows it.
  const name = displaySafeText(claims.name) ?? displaySafeText(claims.preferred_username);
  return { sub, ...(name !== undefined && { name }), source };
}

/** The JSON payload of a JWT, undefined for an opaque token. */
function jwtPayload(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return payload && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The account of a token response: the ID Token's claims (validated by oauth4webapi during the
 * code exchange) when there is one, else the access token's when it is a JWT of this issuer.
 */
export function signedInAccount(res: oauth.TokenEndpointResponse, issuer: string): SignedInAccount | undefined {
  const idToken = oauth.getValidatedIdTokenClaims(res);
  const fromIdToken = idToken && fromClaims(idToken as Record<string, unknown>, 'id_token');
  if (fromIdToken) return fromIdToken;
  const payload = jwtPayload(res.access_token);
  if (!payload || (payload.iss !== undefined && payload.iss !== issuer)) return undefined;
  return fromClaims(payload, 'access_token');
}
