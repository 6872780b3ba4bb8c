/**
 * The provider's authorization endpoint: `GET /authorize` checks the request and shows the
 * sign-in page (or, on a signed-in browser, the consent page); the pages post to `FORM_PATH`.
 * Approval redirects to the client with a single-use code, `state` and `iss`; denial with
 * `error=access_denied` (RFC 6749 §4.1.2.1).
 */
import type { Request, Response } from 'express';
import { sameSecret } from '../client-secret.js';
import { authorizationResponse, checkAuthorizationRequest } from './authorization-request.js';
import { PROVIDER_FORM, consentPage, errorPage, pageCsp, signInPage } from './provider-pages.js';
import type { ResponseIssBehaviour, ThirdPartyClient } from './provider-options.js';
import type { ProviderSessions, Transaction } from './provider-sessions.js';
import type { ProviderTokens } from './provider-tokens.js';

export interface AuthorizationEndpointOptions {
  issuer: string;
  service: string;
  scopes: readonly string[];
  responseIss: ResponseIssBehaviour;
  findClient(clientId: string): ThirdPartyClient | undefined;
  /** The password of a user, undefined for an unknown one. */
  passwordOf(username: string): string | undefined;
  sessions: ProviderSessions;
  tokens: ProviderTokens;
}

export function authorizationEndpoint(o: AuthorizationEndpointOptions) {
  /** `formTarget`: the consent page's post ends in a redirect to the client's origin. */
  const html = (res: Response, status: number, body: string, formTarget?: string) =>
    res.status(status).type('html').set('content-security-policy', pageCsp(formTarget)).send(body);
  const clientOrigin = (transaction: Transaction) => new URL(transaction.request.redirectUri).origin;
  const respond = (res: Response, transaction: Transaction, params: Record<string, string>) => {
    o.sessions.close(transaction);
    const { redirectUri, state } = transaction.request;
    res.redirect(303, authorizationResponse(redirectUri, params, state, o.issuer, o.responseIss));
  };

  function start(req: Request, res: Response): void {
    const check = checkAuthorizationRequest(new URL(req.originalUrl, o.issuer).searchParams, o.findClient, o.scopes);
    if (check.kind === 'page') return void html(res, 400, errorPage(o.service, check.message));
    if (check.kind === 'redirect') {
      const params = { error: check.error, error_description: check.description };
      res.redirect(303, authorizationResponse(check.redirectUri, params, check.state, o.issuer, o.responseIss));
      return;
    }
    const browser = o.sessions.browser(req, res);
    const transaction = o.sessions.open(browser, check.request);
    const user = o.sessions.user(browser);
    if (user === undefined) return void html(res, 200, signInPage(o.service, transaction));
    html(res, 200, consentPage(o.service, transaction, user), clientOrigin(transaction));
  }

  function submit(req: Request, res: Response, form: URLSearchParams): void {
    const transaction = o.sessions.resume(req, form);
    if (!transaction) {
      return void html(
        res,
        403,
        errorPage(o.service, 'This form expired or was opened in another browser. Start again from the application.'),
      );
    }
    const action = form.get(PROVIDER_FORM.button);
    const user = o.sessions.user(transaction.browser);
    if (action === PROVIDER_FORM.signIn) {
      const username = (form.get('username') ?? '').trim();
      const expected = o.passwordOf(username);
      if (expected === undefined || !sameSecret(form.get('password') ?? '', expected)) {
        return void html(res, 401, signInPage(o.service, transaction, 'Invalid username or password.', username));
      }
      o.sessions.signIn(res, transaction, username);
      return void html(res, 200, consentPage(o.service, transaction, username), clientOrigin(transaction));
    }
    if (user === undefined) return void html(res, 200, signInPage(o.service, transaction));
    if (action === PROVIDER_FORM.deny) {
      respond(res, transaction, { error: 'access_denied', error_description: 'the user denied access' });
      return;
    }
    if (action !== PROVIDER_FORM.approve) return void html(res, 400, errorPage(o.service, 'Unknown action.'));
    const { request } = transaction;
    const code = o.tokens.issueCode({
      clientId: request.client.clientId,
      username: user,
      scopes: request.scopes,
      redirectUri: request.redirectUri,
      redirectUriSent: request.redirectUriSent,
      codeChallenge: request.codeChallenge,
    });
    respond(res, transaction, { code });
  }

  return { start, submit };
}
