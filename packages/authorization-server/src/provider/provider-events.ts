/**
 * oidc-provider reports what happens as events; they become log lines, audit events and
 * metrics here. Error lines carry the OAuth error code and oidc-provider's detail (never a
 * token, code or secret: those are not part of its errors), warn for 4xx and error for 5xx.
 */
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from '../ops/logger.js';
import { audit } from '../ops/audit.js';
import { isRefreshGraceRepeat } from '../tokens/refresh-grace.js';
import type { AsMetrics } from '../ops/metrics.js';
import { TOKEN_EXCHANGE_GRANT_TYPE } from '../grants/token-exchange/constants.js';

const ERROR_EVENTS = [
  'server_error',
  'authorization.error',
  'grant.error',
  'registration_create.error',
  'registration_read.error',
  'registration_update.error',
  'registration_delete.error',
  'introspection.error',
  'revocation.error',
  'pushed_authorization_request.error',
  'userinfo.error',
  'discovery.error',
  'jwks.error',
];

type OAuthError = Error & { error?: string; error_detail?: string; status?: number; statusCode?: number };
type Listener = (...args: unknown[]) => void;

function contextOf(args: unknown[]): KoaContextWithOIDC | undefined {
  return args.find((a) => !!a && typeof a === 'object' && 'oidc' in a) as KoaContextWithOIDC | undefined;
}

/** Endpoint name of an error event (`grant.error` → `token`). */
function endpointOf(event: string, ctx: KoaContextWithOIDC | undefined): string {
  if (event === 'server_error') return ctx?.oidc?.route ?? 'unknown';
  const name = event.replace(/\.error$/, '');
  return name === 'grant' ? 'token' : name;
}

export function logProviderErrors(provider: Provider, logger: Logger, metrics?: AsMetrics): void {
  const on = provider.on.bind(provider) as (event: string, listener: Listener) => void;
  for (const event of ERROR_EVENTS) {
    on(event, (...args: unknown[]) => {
      const err = args.find((a): a is OAuthError => a instanceof Error);
      if (!err || isRefreshGraceRepeat(err)) return;
      const ctx = contextOf(args);
      const status = err.status ?? err.statusCode ?? 500;
      // 5xx are reported twice by oidc-provider (the route event and server_error): log once.
      if (status >= 500 && event !== 'server_error') return;
      const error = err.error ?? (status >= 500 ? 'server_error' : err.name);
      // Not an error on the wire: jwt-introspection.ts answers these with RFC 7662 §2.2.
      if (event === 'introspection.error' && error === 'unsupported_token_type') return;
      metrics?.oauthError(endpointOf(event, ctx), error);
      if (event === 'authorization.error') metrics?.authorization('error');
      const fields = {
        event,
        error,
        detail: err.error_detail ?? err.message,
        client_id: ctx?.oidc?.client?.clientId,
      };
      if (status < 500) logger.warn('request refused', fields);
      else logger.error('server error', fields);
    });
  }
}

/**
 * Audit events (src/audit.ts) and metrics for the security decisions oidc-provider takes:
 * authorization responses, tokens issued / refreshed, grants revoked (revocation endpoint or
 * refresh-token reuse), clients registered / updated / deleted. Login and consent decisions
 * are audited by the interaction pages.
 */
export function auditProviderEvents(provider: Provider, logger: Logger, metrics?: AsMetrics): void {
  const on = provider.on.bind(provider) as (event: string, listener: Listener) => void;

  on('authorization.success', (...args) => {
    const ctx = contextOf(args);
    metrics?.authorization('success');
    logger.debug?.('authorization response sent', { client_id: ctx?.oidc?.client?.clientId });
  });

  on('grant.success', (...args) => {
    const ctx = contextOf(args);
    const grantType = String(ctx?.oidc?.params?.grant_type ?? 'unknown');
    metrics?.tokenIssued(grantType);
    const oidc = ctx?.oidc as unknown as
      | {
          client?: { clientId: string };
          entities?: Record<
            string,
            { accountId?: string; scope?: string; aud?: unknown; resourceServer?: { audience?: string } } | undefined
          >;
        }
      | undefined;
    const accessToken = oidc?.entities?.AccessToken ?? oidc?.entities?.ClientCredentials;
    // A token exchange hands out a provider's token, none of ours: audited by its grant (third_party.token_exchanged).
    if (grantType === TOKEN_EXCHANGE_GRANT_TYPE) return;
    audit(logger, grantType === 'refresh_token' ? 'token.refreshed' : 'token.issued', {
      grant_type: grantType,
      client_id: oidc?.client?.clientId,
      account: accessToken?.accountId,
      scope: accessToken?.scope,
      resource: accessToken?.resourceServer?.audience,
    });
  });

  on('grant.revoked', (...args) => {
    const ctx = contextOf(args);
    const route = ctx?.oidc?.route;
    const clientId = ctx?.oidc?.client?.clientId;
    if (route === 'revocation') audit(logger, 'token.revoked', { client_id: clientId });
    audit(logger, 'grant.revoked', {
      client_id: clientId,
      // A refresh token presented twice ends its grant (OAuth 2.1 §4.3.1 reuse detection).
      reason: route === 'revocation' ? 'revocation' : route === 'token' ? 'token_reuse_or_replay' : (route ?? 'unknown'),
    });
  });

  on('registration_create.success', (...args) => {
    const client = args.find((a) => !!a && typeof a === 'object' && 'clientId' in a) as
      | { clientId: string; clientAuthMethod?: string; applicationType?: string }
      | undefined;
    audit(logger, 'client.registered', {
      client_id: client?.clientId,
      auth_method: client?.clientAuthMethod,
      application_type: client?.applicationType,
    });
  });
  on('registration_update.success', (...args) => {
    audit(logger, 'client.updated', { client_id: contextOf(args)?.oidc?.client?.clientId });
  });
  on('registration_delete.success', (...args) => {
    audit(logger, 'client.deleted', { client_id: contextOf(args)?.oidc?.client?.clientId });
  });
}
