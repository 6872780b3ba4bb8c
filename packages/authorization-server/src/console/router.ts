/**
 * The operator's console (`console.path`, e.g. `/console`; issue 44): server-rendered pages over the admin
 * service (admin/service.ts, the same operations as the JSON admin API and the admin tool).
 * Only accounts with the admin role get in; they sign in through the AS's own login page
 * (admin/sign-in.ts, mounted by admin/mount.ts); every change is a POST with a single-use form token bound to the session
 * (admin/change-token.ts, shared with the JSON API) and needs a fresh sign-in (operator.ts). The pages carry no script and take
 * styles only from the console's stylesheet (CSP), and are never framed.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { pageSecurityHeaders } from '../interactions/security-headers.js';
import { escapeHtml } from '../http/html.js';
import { AdminServiceError } from '../admin/types.js';
import { type ConsoleOptions, sendBare, locals, message, send } from './context.js';
import { CONSOLE_STYLE } from './layout.js';
import { issueChangeToken, spendChangeToken } from '../admin/change-token.js';
import { freshEnough, lookUpOperator } from '../admin/operator.js';
import { mountOverview } from './sections/overview.js';
import { mountClients } from './sections/clients.js';
import { mountCimd } from './sections/cimd.js';
import { mountUsers } from './sections/users.js';
import { mountGrants } from './sections/grants.js';
import { mountKeys } from './sections/keys.js';
import { mountAudit } from './sections/audit.js';

export type { ConsoleOptions } from './context.js';

/** What the console's guard, sign-out and error answers share. */
interface Console {
  o: ConsoleOptions;
  base: string;
  bare(res: Response, status: number, title: string, body: string): void;
  signInLink: string;
}

export function createConsoleRouter(o: ConsoleOptions): Router {
  const router = express.Router();
  const base = o.consolePath;
  const bare = (res: Response, status: number, title: string, body: string) => sendBare(res, o, base, status, title, body);
  const signInLink = `<p><a class="button" href="${escapeHtml(`${base}/sign-in`)}">Sign in</a></p>`;
  const c: Console = { o, base, bare, signInLink };

  // The JSON admin API shares the path; it has its own authentication.
  router.use('/api', (_req, _res, next) => next('router'));

  router.get('/assets/console.css', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600');
    res.type('text/css').send(CONSOLE_STYLE);
  });
  router.use(pageSecurityHeaders(false));
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  router.use(express.urlencoded({ extended: false, limit: '8kb' }));

  // `<console>/sign-in` and `/signed-in` are admin/mount.ts's (the sign-in through the login page).

  router.use(operatorGuard(c));

  router.post('/sign-out', async (_req, res, next) => {
    try {
      await locals(res).operator.endSession();
      bare(res, 200, 'Signed out', `<h1>Signed out</h1><div class="card"><p>You are signed out.</p>${signInLink}</div>`);
    } catch (err) {
      next(err);
    }
  });

  for (const mount of [mountOverview, mountClients, mountCimd, mountUsers, mountGrants, mountKeys, mountAudit]) mount(router, o);

  router.use(consoleErrors(c));

  return router;
}

/** The guard: an operator's session, and for a change a fresh sign-in and an unspent form token. */
function operatorGuard({ o, base, bare, signInLink }: Console) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const found = await lookUpOperator(o.provider, o.store, o, req, res);
      if (found.kind === 'none') {
        const body = `<h1>Operator console</h1><div class="card"><p>Sign in with an operator account to manage ${escapeHtml(o.serviceName)}.</p>${signInLink}</div>`;
        return bare(res, 401, 'Sign in', body);
      }
      if (found.kind === 'not-admin') {
        o.logger.warn('console refused: not an operator', { account_id: found.account.id, path: req.path });
        return bare(res, 403, 'Not an operator', message('Not an operator', 'This account may not use the operator console.'));
      }
      const { operator } = found;
      if (req.method === 'POST') {
        // Fetch Metadata: a browser says where a form came from (a form of ours is same-origin);
        // not `Origin`, which a same-origin form under `no-referrer` sends as `null`.
        const site = req.get('sec-fetch-site');
        const crossSite = site !== undefined && site !== 'same-origin' && site !== 'none';
        if (crossSite || !(await spendChangeToken(o.store.kv, operator.sessionUid, req.body?.csrf))) {
          o.logger.warn('console form refused', {
            account_id: operator.account.id,
            reason: crossSite ? 'cross_site' : 'change_token',
            path: req.path,
          });
          const text = 'This form was already sent, has expired, or is not from this console. Nothing was changed.';
          return bare(
            res,
            403,
            'Form refused',
            `${message('Form refused', text)}<p><a href="${escapeHtml(base)}">Back to the console</a></p>`,
          );
        }
        if (req.path !== '/sign-out' && !freshEnough(operator, o.freshSignInSeconds)) {
          const body = `${message('Sign in again', 'Changes need a recent sign-in. Nothing was changed.')}${signInLink}`;
          return bare(res, 401, 'Sign in again', body);
        }
      }
      const csrf = await issueChangeToken(o.store.kv, operator.sessionUid);
      const operatorName = operator.account.displayName ?? operator.account.username;
      res.locals.console = { operator, frame: { serviceName: o.serviceName, base, current: '', operator: operatorName, csrf } };
      next();
    } catch (err) {
      next(err);
    }
  };
}

function consoleErrors({ o, bare }: Console) {
  return (err: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    if (err instanceof AdminServiceError) {
      const status = err.error === 'not_found' ? 404 : err.error === 'conflict' ? 409 : 400;
      return res.locals.console
        ? send(res, '', 'Not done', message('Not done', err.message), status)
        : bare(res, status, 'Not done', message('Not done', err.message));
    }
    // Client errors raised by express/body-parser keep their 4xx status (see the interaction router).
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    (status === 500 ? o.logger.error : o.logger.warn)('console failed', { error: err.name, detail: err.message, status });
    bare(
      res,
      status,
      'Error',
      message('Something went wrong', status === 500 ? 'The request could not be completed.' : 'The request is not valid.'),
    );
  };
}
