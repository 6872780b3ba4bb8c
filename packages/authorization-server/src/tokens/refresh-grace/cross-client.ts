/**
 * RFC 9700 §4.14.2: a rotated refresh token coming back means it leaked. oidc-provider only
 * says "client mismatch" when another client presents it; the grant is revoked here as well
 * (after the provider's refusal, with its public models and events).
 */
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from '../../ops/logger.js';
import { jsonBody } from './request.js';

interface FoundRefreshToken {
  consumed?: unknown;
  clientId?: string;
  grantId?: string;
}

/** Revokes the grant when `value` is a consumed refresh token of another client than the authenticated one. */
export async function revokeCrossClientReuse(provider: Provider, ctx: KoaContextWithOIDC, value: string, logger: Logger): Promise<void> {
  const token = (await provider.RefreshToken.find(value, { ignoreExpiration: true })) as FoundRefreshToken | undefined;
  const grantId = token?.grantId;
  if (!token?.consumed || !grantId || token.clientId === ctx.oidc.client?.clientId) return;
  await Promise.all([
    provider.AccessToken.revokeByGrantId(grantId),
    provider.RefreshToken.revokeByGrantId(grantId),
    provider.AuthorizationCode.revokeByGrantId(grantId),
    provider.Grant.find(grantId).then((grant) => grant?.destroy()),
  ]);
  logger.warn('consumed refresh token presented by another client: grant revoked', {
    client_id: ctx.oidc.client?.clientId,
    owner_client_id: token.clientId,
    event: 'refresh_grace.cross_client_reuse',
  });
  provider.emit('grant.revoked', ctx, grantId);
  const body = jsonBody(ctx);
  if (body) body.error_description = 'refresh token already used (presented by another client)';
}
