/**
 * RFC 7662 introspection of our own JWT access tokens.
 *
 * oidc-provider refuses every JWT at its introspection endpoint with `unsupported_token_type`,
 * an error RFC 7662 §2.2 does not have: the endpoint answers `{"active": true, …}` for a token
 * that is valid and `{"active": false}` otherwise. A JWT is self-contained, so the answer is only
 * worth asking for what the JWT cannot say: whether its grant still exists and its user's account
 * is still enabled. A grant ends when
 * its refresh token is revoked (RFC 7009), reused after rotation or presented by another client
 * (RFC 9700 §4.14.2), its authorization code replayed (RFC 6749 §4.1.2), or the user withdraws
 * the approval; introspection is how a resource server learns of it before the token expires.
 *
 * Mounted around the provider's own endpoint: the provider parses the request and authenticates
 * the client (RFC 7662 §2.1, every method) before it refuses the JWT. That refusal is replaced
 * here by the §2.2 answer. Who may see a token is the same policy as for the provider's tokens
 * (src/ops/token-policies.ts); anything the caller may not see reads `{"active": false}`, the
 * answer for an unknown token, so the endpoint is no oracle.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type Provider from 'oidc-provider';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from './logger.js';
import type { IntrospectionPolicy } from './ops/token-policies.js';

/** Private claim of a user's access token: the grant it was issued from. */
export const GRANT_CLAIM = 'grant_id';

export interface JwtIntrospectionOptions {
  issuer: string;
  /** The provider's signing keys (JWKs, private parts ignored): what `/jwks` publishes. */
  signingKeys: readonly JWK[];
  /** Who may see which token (the provider's `features.introspection.allowedPolicy`). */
  allowed: IntrospectionPolicy;
  logger: Logger;
}

type IntrospectionResponse = { active: false } | ({ active: true } & Record<string, unknown>);

const inactive = (): IntrospectionResponse => ({ active: false });

/** The `extraTokenClaims` of the provider: user access tokens name their grant. */
export function grantClaim(token: { kind?: string; grantId?: string }): Record<string, string> | undefined {
  return token.kind === 'AccessToken' && token.grantId ? { [GRANT_CLAIM]: token.grantId } : undefined;
}

function publicJwk(jwk: JWK): JWK {
  const exported = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }).export({ format: 'jwk' }) as JWK;
  return { ...exported, ...(jwk.kid && { kid: jwk.kid }), ...(jwk.alg && { alg: jwk.alg }), use: 'sig' };
}

export function installJwtIntrospection(provider: Provider, options: JwtIntrospectionOptions): void {
  const keys = options.signingKeys.map(publicJwk);
  const keySet = createLocalJWKSet({ keys });
  const algorithms = [...new Set(keys.map((k) => k.alg ?? 'ES256'))];
  const { issuer, allowed, logger } = options;

  async function introspect(ctx: KoaContextWithOIDC, token: string): Promise<IntrospectionResponse> {
    let payload: JWTPayload;
    try {
      // RFC 9068 §4: our typ, our issuer, our keys, not expired (no leeway: we are the clock).
      ({ payload } = await jwtVerify(token, keySet, {
        issuer,
        typ: 'at+jwt',
        algorithms,
        requiredClaims: ['exp', 'iat', 'jti', 'sub', 'aud', 'client_id'],
      }));
    } catch {
      return inactive();
    }
    const clientId = payload.client_id;
    const grantId = payload[GRANT_CLAIM];
    if (typeof clientId !== 'string' || (grantId !== undefined && typeof grantId !== 'string')) return inactive();
    // Client credentials tokens have no grant and name the client as subject.
    if (grantId === undefined && payload.sub !== clientId) return inactive();
    const kind = grantId === undefined ? 'ClientCredentials' : 'AccessToken';
    // Before the grant lookup: a foreign token costs what an unknown one does.
    // The policy also refuses a disabled user's token (the account named by `sub`).
    const accountId = grantId !== undefined && typeof payload.sub === 'string' ? payload.sub : undefined;
    if (!(await allowed(ctx, ctx.oidc.client!, { clientId, kind, aud: payload.aud, ...(accountId && { accountId }) }))) return inactive();
    if (grantId !== undefined) {
      const grant = (await provider.Grant.find(grantId)) as { clientId?: string; accountId?: string } | undefined;
      if (!grant || typeof payload.sub !== 'string' || grant.clientId !== clientId || grant.accountId !== payload.sub) return inactive();
    }
    const { [GRANT_CLAIM]: _grant, ...claims } = payload;
    const cnf = claims.cnf as { jkt?: unknown } | undefined;
    return { active: true, ...claims, token_type: typeof cnf?.jkt === 'string' ? 'DPoP' : 'Bearer' };
  }

  // Contexts whose JWT the provider refused after authenticating the client.
  const refused = new WeakSet<object>();
  (provider.on as (event: string, listener: (...args: unknown[]) => void) => void)('introspection.error', (ctx, err) => {
    if (err instanceof errors.UnsupportedTokenType && ctx && typeof ctx === 'object') refused.add(ctx);
  });

  provider.use(async (koa, next) => {
    await next();
    if (!refused.has(koa)) return;
    refused.delete(koa);
    const ctx = koa as unknown as KoaContextWithOIDC;
    const token = ctx.oidc?.params?.token;
    if (!ctx.oidc?.client || typeof token !== 'string') return;
    ctx.set('cache-control', 'no-store');
    try {
      ctx.body = await introspect(ctx, token);
      ctx.status = 200;
    } catch (err) {
      // Fail closed, and visibly: a store failure must not read as "revoked".
      logger.error('JWT introspection failed', {
        client_id: ctx.oidc.client.clientId,
        detail: err instanceof Error ? err.message : String(err),
      });
      ctx.status = 500;
      ctx.body = { error: 'server_error', error_description: 'oops! something went wrong' };
    }
  });
}
