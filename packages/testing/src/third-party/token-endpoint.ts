/**
 * The provider's token endpoint (RFC 6749 §4.1.3 and §6): `authorization_code` with the PKCE
 * verifier (RFC 7636 §4.6) and `refresh_token` with rotation. Confidential clients only.
 */
import { pkceChallengeS256, splitScope } from '@mcp-auth-kit/protocol';
import type { Request, Response } from 'express';
import { sendJson, sendOAuthError } from './oauth-response.js';
import { authenticateClient } from './provider-client-auth.js';
import type { ThirdPartyClient } from './provider-options.js';
import type { ProviderTokens } from './provider-tokens.js';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export function tokenEndpoint(tokens: ProviderTokens, findClient: (clientId: string) => ThirdPartyClient | undefined) {
  return (req: Request, res: Response, form: URLSearchParams): void => {
    const client = authenticateClient(req, res, form, findClient);
    if (!client) return;
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') {
      redeemCode(res, form, client);
      return;
    }
    if (grantType === 'refresh_token') {
      refresh(res, form, client);
      return;
    }
    if (grantType === null) {
      sendOAuthError(res, 400, 'invalid_request', 'grant_type is required');
      return;
    }
    sendOAuthError(res, 400, 'unsupported_grant_type', 'authorization_code and refresh_token only');
  };

  function redeemCode(res: Response, form: URLSearchParams, client: ThirdPartyClient): void {
    const code = form.get('code');
    if (code === null) {
      sendOAuthError(res, 400, 'invalid_request', 'code is required');
      return;
    }
    const entry = tokens.redeemCode(code, client.clientId);
    if (!entry) {
      sendOAuthError(res, 400, 'invalid_grant', 'the code is not valid (unknown, expired, used, or not issued to this client)');
      return;
    }
    const redirectUri = form.get('redirect_uri');
    // RFC 6749 §4.1.3: required and identical when the authorization request carried it.
    if ((entry.redirectUriSent || redirectUri !== null) && redirectUri !== entry.redirectUri) {
      entry.discard();
      sendOAuthError(res, 400, 'invalid_grant', 'redirect_uri does not match the authorization request');
      return;
    }
    const verifier = form.get('code_verifier');
    if (verifier === null || !VERIFIER.test(verifier) || pkceChallengeS256(verifier) !== entry.codeChallenge) {
      entry.discard();
      sendOAuthError(res, 400, 'invalid_grant', 'PKCE verification failed');
      return;
    }
    sendJson(res, 200, entry.redeem());
  }

  function refresh(res: Response, form: URLSearchParams, client: ThirdPartyClient): void {
    const token = form.get('refresh_token');
    if (token === null) {
      sendOAuthError(res, 400, 'invalid_request', 'refresh_token is required');
      return;
    }
    const scope = form.get('scope');
    const outcome = tokens.refresh(token, client.clientId, scope === null ? undefined : splitScope(scope));
    if (!outcome.ok) {
      sendOAuthError(res, 400, outcome.error, outcome.description);
      return;
    }
    sendJson(res, 200, outcome.tokens);
  }
}
