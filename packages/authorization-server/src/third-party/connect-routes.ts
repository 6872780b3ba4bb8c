/**
 * `<issuer>/connect/…`: where a user connects a third-party account, the URL an
 * `interaction_required` answer names (MCP elicitation, "URL Mode Elicitation for OAuth Flows").
 * The identity check is our own login session ("Identifying the User"): the ticket is bound to a
 * `sub`, and only a browser signed in to this AS as that account may use it — anyone else gets a
 * refusal and nothing is linked, in either direction (the URL is not pre-authenticated: "Safe URL
 * Handling"). Then a confirmation (CSRF), the provider's authorization (PKCE S256, `state`, RFC 9207
 * `iss`), and the callback, which stores the tokens for the ticket's `sub` only.
 *
 *   GET  /connect/:ticket   not signed in → the login page (sign-in.ts); another account → refusal;
 *                           the right one → the confirmation page
 *   POST /connect/:ticket   connect (takes the ticket, starts the flow) | cancel | switch account
 *   GET  /connect/callback  the provider's redirect: the flow of this browser and session, once
 *   GET  /connect/signed-in the end of the sign-in: back to the ticket (remembered in a cookie)
 */
import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { audit } from '../ops/audit.js';
import { clientAddress } from '../http/client-address.js';
import { checkCsrfToken, issueCsrfToken } from '../interactions/csrf.js';
import { readCookie } from '../interactions/cookies.js';
import type { AccountPageOptions } from '../interactions/account.js';
import { pageSecurityHeaders } from '../interactions/security-headers.js';
import { signedIn, type SignedIn } from '../interactions/signed-in.js';
import { shownAccountName } from '../accounts/account-name.js';
import { confirmPage, connectedPage, noticePage, otherAccountPage } from './pages.js';
import { ProviderError, type ResolvedProvider } from './providers.js';
import type { ThirdParty } from './service.js';
import type { ProviderTokens } from './vault.js';
import { signInUrl } from './sign-in.js';
import { FLOW_TTL, isHandle, type Ticket } from './tickets.js';

/** The browser's handle of its provider flow (the callback finds the flow by it, not by `state`). */
const FLOW_COOKIE = 'mcp_connect';
/** The ticket to come back to after signing in. */
const RETURN_COOKIE = 'mcp_connect_return';

export interface ConnectRouterOptions extends AccountPageOptions {
  thirdParty: ThirdParty;
  issuer: string;
}

/** What every connect route shares: the options, this router's paths and cookie, and its answers. */
interface Connect {
  o: ConnectRouterOptions;
  base: string;
  stylesheet: string;
  cookie: { path: string; httpOnly: true; secure: boolean; sameSite: 'lax' };
  notice(res: Response, status: number, title: string, message: string): void;
  expired(res: Response): void;
  refused(req: Request, reason: string, fields?: Record<string, unknown>): void;
}

function connectContext(o: ConnectRouterOptions): Connect {
  const base = `${o.mountPath}/connect`;
  const stylesheet = `${o.mountPath}/interaction/assets/style.css`;
  const notice = (res: Response, status: number, title: string, message: string): void => {
    res
      .status(status)
      .type('html')
      .send(noticePage(title, message, stylesheet));
  };
  return {
    o,
    base,
    stylesheet,
    cookie: { path: base, httpOnly: true, secure: o.secureCookies, sameSite: 'lax' as const },
    notice,
    expired: (res) => notice(res, 400, 'Link expired', 'This link has expired or was already used. Nothing was connected.'),
    refused: (req, reason, fields = {}) => audit(o.logger, 'third_party.refused', { reason, ip: clientAddress(req), ...fields }),
  };
}

// A flat list of route registrations; each step's checks live in the handler it names.
export function createConnectRouter(o: ConnectRouterOptions): Router {
  const c = connectContext(o);
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  router.use(express.urlencoded({ extended: false, limit: '4kb' }));
  const pageSecurity = pageSecurityHeaders(true);
  router.get('/signed-in', pageSecurityHeaders(false), signedInRoute(c));
  router.get('/callback', pageSecurityHeaders(false), callbackRoute(c));
  router.get('/:ticket', formTargets(c), pageSecurity, confirmRoute(c));
  router.post('/:ticket', formTargets(c), pageSecurity, connectRoute(c));
  router.use(connectErrors(c));
  return router;
}

/** Sends the browser to the login page; the ticket is kept in a cookie of this path only. */
function signIn(c: Connect, res: Response, ticket: string): void {
  res.cookie(RETURN_COOKIE, ticket, { ...c.cookie, maxAge: c.o.thirdParty.config.connectTicketTTL * 1000 });
  res.redirect(303, signInUrl(c.o.issuer));
}

function signedInRoute(c: Connect) {
  return (req: Request, res: Response) => {
    const ticket = readCookie(req, RETURN_COOKIE);
    res.clearCookie(RETURN_COOKIE, c.cookie);
    // An error response of the sign-in request (the user cancelled on the login page).
    if (typeof req.query.error === 'string' || !isHandle(ticket))
      return c.notice(res, 400, 'Not signed in', 'Sign-in did not complete, so nothing was connected.');
    res.redirect(303, `${c.base}/${ticket}`);
  };
}

function callbackRoute(c: Connect) {
  const { o, notice, refused } = c;
  const { thirdParty, logger } = o;
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.clearCookie(FLOW_COOKIE, c.cookie);
      const flow = await thirdParty.records.takeFlow(readCookie(req, FLOW_COOKIE));
      if (!flow) {
        refused(req, 'unknown_flow');
        return notice(
          res,
          400,
          'Not connected',
          'This connection attempt has expired, was already completed, or was started in another browser.',
        );
      }
      const p = thirdParty.providers.get(flow.provider);
      if (!p) {
        refused(req, 'unknown_provider', { provider: flow.provider, account: flow.sub });
        return notice(res, 400, 'Not connected', 'This service is no longer configured here. Nothing was connected.');
      }
      // The state was made for this browser's session and account: still signed in as that account?
      const user = await signedIn(o.provider, o.store, o, req, res);
      if (!user || user.sessionUid !== flow.sessionUid || user.account.id !== flow.sub) {
        refused(req, 'session_changed', { provider: flow.provider, account: flow.sub });
        return notice(res, 403, 'Not connected', 'You signed out or switched accounts during the connection, so nothing was connected.');
      }
      const query = new URL(req.originalUrl, 'http://x').searchParams;
      let tokens: ProviderTokens;
      try {
        tokens = await thirdParty.providers.exchangeCode(p, query, { state: flow.state, codeVerifier: flow.codeVerifier });
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        refused(req, 'provider', { provider: p.name, account: flow.sub, error: err.error, detail: err.reason });
        if (err.error === 'access_denied')
          return notice(res, 400, 'Not connected', `You did not allow access at ${p.displayName}, so nothing was connected.`);
        if (err.error === 'foreign_callback')
          return notice(res, 400, 'Not connected', 'This answer does not belong to the connection you started, so nothing was connected.');
        return notice(res, 502, 'Not connected', `${p.displayName} did not complete the connection (${err.error}). Nothing was connected.`);
      }
      await thirdParty.vault.save(flow.sub, p.name, tokens);
      audit(logger, 'third_party.connected', {
        account: flow.sub,
        provider: p.name,
        resource: flow.resource,
        client_id: flow.clientId,
        scope: tokens.scopes.join(' '),
      });
      res.type('html').send(connectedPage(o.serviceName, p.displayName, c.stylesheet));
    } catch (err) {
      next(err);
    }
  };
}

/** The ticket, its provider, and the signed-in user — or the page that says why not. */
async function load(
  c: Connect,
  req: Request,
  res: Response,
): Promise<{ ticket: Ticket; p: ResolvedProvider; user?: SignedIn } | undefined> {
  const { thirdParty } = c.o;
  const bound = await thirdParty.records.peekTicket(String(req.params.ticket));
  const p = bound ? thirdParty.providers.get(bound.provider) : undefined;
  if (!bound || !p) {
    c.refused(req, 'unknown_ticket');
    c.expired(res);
    return undefined;
  }
  return { ticket: bound, p, user: await signedIn(c.o.provider, c.o.store, c.o, req, res) };
}

/** Signed in as another account than the ticket's: refused, nothing linked, switching offered. */
function otherAccount(c: Connect, req: Request, res: Response, p: ResolvedProvider, user: SignedIn): void {
  c.refused(req, 'other_account', { provider: p.name, account: user.account.id });
  const csrf = issueCsrfToken(res, `${c.base}/${String(req.params.ticket)}`, c.o.secureCookies);
  res
    .status(403)
    .type('html')
    .send(
      otherAccountPage({
        serviceName: c.o.serviceName,
        action: `${c.base}/${String(req.params.ticket)}`,
        csrf,
        stylesheet: c.stylesheet,
        provider: p.displayName,
        account: shownAccountName(user.account),
      }),
    );
}

function formTargets(c: Connect) {
  const { thirdParty } = c.o;
  return async (req: Request, res: Response, next: NextFunction) => {
    // The confirmation's POST ends in a redirect to the provider: its origin is a form-action target.
    try {
      const bound = await thirdParty.records.peekTicket(String(req.params.ticket));
      const p = bound ? thirdParty.providers.get(bound.provider) : undefined;
      res.locals.formTargets = p ? [await thirdParty.providers.authorizationOrigin(p)] : [];
    } catch {
      res.locals.formTargets = [];
    }
    next();
  };
}

/** GET /connect/:ticket: the confirmation page, for the ticket's own account only. */
function confirmRoute(c: Connect) {
  const { o } = c;
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const loaded = await load(c, req, res);
      if (!loaded) return;
      const { ticket, p, user } = loaded;
      if (!user) return signIn(c, res, String(req.params.ticket));
      if (user.account.id !== ticket.sub) return otherAccount(c, req, res, p, user);
      if (!(res.locals.formTargets as string[]).length)
        return c.notice(res, 502, 'Not available', `${p.displayName} cannot be reached right now. Try again later.`);
      const action = `${c.base}/${String(req.params.ticket)}`;
      res.type('html').send(
        confirmPage({
          serviceName: o.serviceName,
          action,
          csrf: issueCsrfToken(res, action, o.secureCookies),
          stylesheet: c.stylesheet,
          provider: p.displayName,
          resourceName: o.scopeText.resourceName(ticket.resource),
          resource: ticket.resource,
          scopes: p.scopes,
          account: shownAccountName(user.account),
        }),
      );
    } catch (err) {
      next(err);
    }
  };
}

/** POST /connect/:ticket: CSRF first, then switch account, or connect / cancel for the ticket's account. */
function connectRoute(c: Connect) {
  const { o, notice, refused } = c;
  const { thirdParty, logger } = o;
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (!checkCsrfToken(req)) {
        refused(req, 'csrf');
        return notice(res, 403, 'Form expired', 'The form expired. Go back, reload the page and try again.');
      }
      const loaded = await load(c, req, res);
      if (!loaded) return;
      const { ticket, p, user } = loaded;
      const action = req.body?.action;
      if (action === 'switch') {
        // Signed out here first: the login page then signs in afresh (no session to fall back to).
        await user?.destroy();
        if (user) audit(logger, 'session.ended', { account_id: user.account.id, reason: 'switch-account', ip: clientAddress(req) });
        return signIn(c, res, String(req.params.ticket));
      }
      if (!user) return signIn(c, res, String(req.params.ticket));
      if (user.account.id !== ticket.sub) return otherAccount(c, req, res, p, user);
      if (action !== 'connect' && action !== 'cancel') return notice(res, 400, 'Not connected', 'Unsupported action.');
      // MCP security best practices §OAuth State Parameter Validation: state made and stored only
      // now (after the confirmation), tied to this browser (cookie) and session, used once.
      const codeVerifier = randomBytes(32).toString('base64url');
      const state = randomBytes(32).toString('base64url');
      let url: URL | undefined;
      if (action === 'connect') {
        try {
          url = await thirdParty.providers.authorizationUrl(p, state, codeVerifier);
        } catch {
          // before the ticket is taken: the user may try the same link again
          return notice(res, 502, 'Not available', `${p.displayName} cannot be reached right now. Try again later.`);
        }
      }
      // The ticket is used now, once: a replayed link or a second submission finds nothing.
      if (!(await thirdParty.records.takeTicket(String(req.params.ticket)))) {
        refused(req, 'ticket_taken', { provider: p.name, account: user.account.id });
        return c.expired(res);
      }
      if (!url) {
        refused(req, 'cancelled', { provider: p.name, account: user.account.id });
        return notice(res, 200, 'Not connected', `Nothing was connected. Your application will ask again when it needs ${p.displayName}.`);
      }
      const handle = await thirdParty.records.startFlow({ ...ticket, sessionUid: user.sessionUid, state, codeVerifier });
      res.cookie(FLOW_COOKIE, handle, { ...c.cookie, maxAge: FLOW_TTL * 1000 });
      res.redirect(303, url.href);
    } catch (err) {
      next(err);
    }
  };
}

function connectErrors(c: Connect) {
  const { logger } = c.o;
  return (err: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    // Client errors raised by express/body-parser keep their 4xx status (see the interaction router).
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    (status === 500 ? logger.error : logger.warn)('connect page failed', { error: err.name, detail: err.message, status });
    if (!res.headersSent)
      c.notice(res, status, 'Not connected', status === 500 ? 'The request could not be completed.' : 'The request is not valid.');
  };
}
