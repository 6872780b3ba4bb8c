/** The provider's revocation endpoint (RFC 7009), for its confidential clients. */
import type { Request, Response } from 'express';
import { sendOAuthError } from './oauth-response.js';
import { authenticateClient } from './provider-client-auth.js';
import type { ThirdPartyClient } from './provider-options.js';
import type { ProviderTokens } from './provider-tokens.js';

/** RFC 7009: revokes a token of the authenticated client; unknown tokens are answered 200 too (§2.2). */
export function revocationEndpoint(tokens: ProviderTokens, findClient: (clientId: string) => ThirdPartyClient | undefined) {
  return (req: Request, res: Response, form: URLSearchParams): void => {
    const client = authenticateClient(req, res, form, findClient);
    if (!client) return;
    const token = form.get('token');
    if (token === null) {
      sendOAuthError(res, 400, 'invalid_request', 'token is required');
      return;
    }
    // §2.1: the token must have been issued to the client that asks.
    if (tokens.revoke(token, client.clientId) === 'foreign') {
      sendOAuthError(res, 400, 'invalid_request', 'the token was not issued to this client');
      return;
    }
    res.status(200).set('cache-control', 'no-store').end();
  };
}
