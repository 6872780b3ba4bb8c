import { DEFAULTS } from './config/defaults.js';

/** How this server authenticates to its authorization server as an OAuth client (RFC 6749 §2.3.1). */
export type ClientSecretMethod = 'client_secret_basic' | 'client_secret_post';

export interface ClientSecretCredentials {
  clientId: string;
  clientSecret: string;
  /** Default `client_secret_basic`. */
  authMethod?: ClientSecretMethod | undefined;
}

/**
 * Adds the client's credentials to a form request: an `Authorization: Basic` header (the id and
 * secret form-urlencoded before base64, RFC 6749 §2.3.1) or `client_id` / `client_secret` in the
 * body. One place for both requests this package makes as a client: introspection and token
 * exchange.
 */
export function authenticateClient(credentials: ClientSecretCredentials, form: URLSearchParams, headers: Record<string, string>): void {
  if ((credentials.authMethod ?? DEFAULTS.introspection.authMethod) === 'client_secret_basic') {
    const id = encodeURIComponent(credentials.clientId);
    const secret = encodeURIComponent(credentials.clientSecret);
    headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  } else {
    form.set('client_id', credentials.clientId);
    form.set('client_secret', credentials.clientSecret);
  }
}
