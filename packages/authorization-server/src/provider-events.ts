/**
 * oidc-provider reports refused and failed requests as events; they become log lines with the
 * OAuth error code and oidc-provider's detail (never a token, code or secret: those are not
 * part of its errors), warn for 4xx and error for 5xx.
 */
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from './logger.js';

const EVENTS = [
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

export function logProviderErrors(provider: Provider, logger: Logger): void {
  const on = provider.on.bind(provider) as (event: string, listener: (...args: unknown[]) => void) => void;
  for (const event of EVENTS) {
    on(event, (...args: unknown[]) => {
      const err = args.find((a): a is OAuthError => a instanceof Error);
      if (!err) return;
      const ctx = args.find((a) => !!a && typeof a === 'object' && 'oidc' in a) as KoaContextWithOIDC | undefined;
      const status = err.status ?? err.statusCode ?? 500;
      // 5xx are reported twice by oidc-provider (the route event and server_error): log once.
      if (status >= 500 && event !== 'server_error') return;
      const fields = {
        event,
        error: err.error ?? err.name,
        detail: err.error_detail ?? err.message,
        client_id: ctx?.oidc?.client?.clientId,
      };
      if (status < 500) logger.warn('request refused', fields);
      else logger.error('server error', fields);
    });
  }
}
