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
import type { JWK } from 'jose';
import type Provider from 'oidc-provider';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from '../ops/logger.js';
import type { IntrospectionPolicy } from '../ops/token-policies.js';
import { createOwnAccessTokenVerifier, GRANT_CLAIM, grantIsLive } from './own-access-tokens.js';

export { GRANT_CLAIM };

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

export function installJwtIntrospection(provider: Provider, options: JwtIntrospectionOptions): void {
  const verify = createOwnAccessTokenVerifier(options.issuer, options.signingKeys);
  const { allowed, logger } = options;

  async function introspect(ctx: KoaContextWithOIDC, token: string): Promise<IntrospectionResponse> {
    // RFC 9068 §4: our typ, our issuer, our keys, not expired (own-access-tokens.ts).
    const verified = await verify(token);
    if (!verified) return inactive();
    const { payload, clientId, grantId } = verified;
    const kind = grantId === undefined ? 'ClientCredentials' : 'AccessToken';
    // Before the grant lookup: a foreign token costs what an unknown one does.
    // The policy also refuses a disabled user's token (the account named by `sub`).
    const accountId = grantId !== undefined && typeof payload.sub === 'string' ? payload.sub : undefined;
    if (!(await allowed(ctx, ctx.oidc.client!, { clientId, kind, aud: payload.aud, ...(accountId && { accountId }) }))) return inactive();
    if (grantId !== undefined && !(await grantIsLive(provider, verified))) return inactive();
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
