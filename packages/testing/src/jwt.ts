/** Reads (never verifies) a JWT's payload: the resource server under test does the verifying. */
export interface AccessTokenClaims {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  iat?: number;
  jti?: string;
  client_id?: string;
  scope?: string;
  [claim: string]: unknown;
}

export function decodeAccessToken(token: string): { header: Record<string, unknown>; claims: AccessTokenClaims } {
  const parts = token.split('.');
  if (parts.length !== 3) throw new TypeError('not a JWS compact serialization');
  const json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: json(parts[0]!), claims: json(parts[1]!) as AccessTokenClaims };
}

/**
 * Resolves once `token` has expired for a resource server allowing `clockToleranceSeconds` of
 * leeway (jose rejects when now ≥ exp + tolerance).
 */
export async function waitUntilExpired(token: string, clockToleranceSeconds = 0): Promise<void> {
  const { exp } = decodeAccessToken(token).claims;
  if (typeof exp !== 'number') throw new TypeError('the token has no exp claim');
  const wait = (exp + clockToleranceSeconds) * 1000 - Date.now() + 50;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
