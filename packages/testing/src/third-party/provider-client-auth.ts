/**
 * Client authentication at the provider's token and revocation endpoints: the registered
 * secret, by `client_secret_basic` or `client_secret_post`. A failure is `invalid_client` with
 * 401, and a `WWW-Authenticate: Basic` challenge when the client tried Basic (RFC 6749 §5.2).
 */
import type { Request, Response } from 'express';
import { readClientCredentials, sameSecret } from '../client-secret.js';
import { sendOAuthError } from './oauth-response.js';
import type { ThirdPartyClient } from './provider-options.js';

/** The authenticated client, or undefined after the error was sent. */
export function authenticateClient(
  req: Request,
  res: Response,
  form: URLSearchParams,
  findClient: (clientId: string) => ThirdPartyClient | undefined,
): ThirdPartyClient | undefined {
  const presented = readClientCredentials(req.headers.authorization, form);
  if (presented.kind === 'malformed' && presented.method === 'both') {
    sendOAuthError(res, 400, 'invalid_request', 'use one client authentication method per request');
    return undefined;
  }
  const client = presented.kind === 'secret' ? findClient(presented.clientId) : undefined;
  if (presented.kind === 'secret' && client && sameSecret(presented.secret, client.clientSecret)) return client;
  if (presented.kind !== 'none' && presented.method === 'client_secret_basic') res.set('www-authenticate', 'Basic realm="token"');
  sendOAuthError(res, 401, 'invalid_client', 'client authentication failed');
  return undefined;
}
