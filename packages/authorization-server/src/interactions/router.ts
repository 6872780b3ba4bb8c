/**
 * Interaction endpoints (`<mount>/interaction/:uid`): login (local accounts and upstream
 * OpenID Connect providers), consent and the dev auto-login. oidc-provider redirects the
 * browser here whenever it needs the user; we answer with `interactionResult` and send the
 * browser back to the provider. Each step lives in its own file (login.ts, consent.ts,
 * abort.ts, switch-account.ts, upstream-routes.ts); this one wires them.
 */
import express, { type Request, type Response, type NextFunction, type Router } from 'express';
import { pageSecurityHeaders } from './security-headers.js';
import { PAGE_STYLE } from '../http/html.js';
import { UpstreamLogin } from '../upstream/login.js';
import { checkCsrfToken } from './csrf.js';
import { abortInteraction } from './abort.js';
import { type ConsentStep, createConsentStep } from './consent.js';
import { createInteractionContext, type Details, type InteractionContext, type InteractionOptions, loadInteraction } from './context.js';
import { createLoginStep, type LoginStep } from './login.js';
import { mountUpstreamRoutes, startUpstreamLogin } from './upstream-routes.js';
import { switchAccount } from './switch-account.js';
import { isLocalDevRequest } from '../ops/dev-switches.js';
import { isConnectSignIn, SIGNED_IN_PATH } from '../third-party/sign-in.js';
import { isConsoleSignIn } from '../admin/sign-in.js';

export type { InteractionOptions } from './context.js';

/** What the interaction routes share: the options, the steps and the upstream login (when configured). */
interface Steps {
  o: InteractionOptions;
  ctx: InteractionContext;
  upstream: UpstreamLogin | undefined;
  login: LoginStep;
  consent: ConsentStep;
}

export function createInteractionRouter(o: InteractionOptions): Router {
  const router = express.Router();
  const ctx = createInteractionContext(o);
  const upstream = o.upstream.length
    ? new UpstreamLogin(o.upstream, { store: o.store, logger: o.logger, redirectUri: `${o.issuer}/interaction/upstream/callback` })
    : undefined;
  // Discovery ahead of the first click, so the login page's CSP can name the providers'
  // authorization endpoints even when they are not on the issuer's origin.
  upstream?.warm();
  const steps: Steps = { o, ctx, upstream, login: createLoginStep(ctx), consent: createConsentStep(ctx) };

  // The only static asset: lets the CSP forbid inline styles (`style-src 'self'`).
  router.get('/assets/style.css', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600');
    res.type('text/css').send(PAGE_STYLE);
  });

  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    res.set('Pragma', 'no-cache');
    next();
  });
  const pageSecurity = pageSecurityHeaders(true);
  router.use(pageSecurityHeaders(false));
  router.use(express.urlencoded({ extended: false, limit: '8kb' }));

  const load = loadInteraction(ctx, upstream);
  mountUpstreamRoutes(router, ctx, upstream, load, pageSecurity);
  router.get('/:uid', load, pageSecurity, async (req, res, next) => {
    try {
      await show(steps, req, res, res.locals.details as Details);
    } catch (err) {
      next(err);
    }
  });
  router.post('/:uid', load, pageSecurity, async (req, res, next) => {
    try {
      await submit(steps, req, res, res.locals.details as Details);
    } catch (err) {
      next(err);
    }
  });
  router.use(interactionErrors(steps));
  return router;
}

/**
 * A connect page's sign-in (third-party/sign-in.ts) ends once the user is signed in: at its
 * consent prompt the interaction is dropped, never approved (no grant, no code), and the
 * browser goes back to the connect page — before the dev auto-login, which would approve it.
 */
async function endConnectSignIn(o: InteractionOptions, res: Response, details: Details): Promise<boolean> {
  const connect = isConnectSignIn(details.params);
  // The console's sign-in (admin/sign-in.ts) ends the same way, at the console's own path.
  const consoleSignIn = isConsoleSignIn(details.params) && o.consolePath !== undefined;
  if ((!connect && !consoleSignIn) || details.prompt.name === 'login') return false;
  await details.destroy();
  res.redirect(303, connect ? `${o.mountPath}${SIGNED_IN_PATH}` : `${o.mountPath}${o.consolePath}/signed-in`);
  return true;
}

/** GET: the page of the interaction's prompt (or the dev auto-login's answer). */
async function show({ o, ctx, login, consent }: Steps, req: Request, res: Response, details: Details): Promise<void> {
  if (await endConnectSignIn(o, res, details)) return;
  // Dev auto-login only for a browser on this machine, never through a tunnel or proxy.
  if (o.devAutoLoginAccountId && isLocalDevRequest(req.headers)) {
    if (details.prompt.name === 'login') {
      await ctx.finish(req, res, { login: { accountId: o.devAutoLoginAccountId } }, false);
    } else {
      await consent.approve(req, res, details, (await consent.baseGrant(details)).remembered, 'dev');
    }
    return;
  }
  if (details.prompt.name === 'login') return await login.render(res, details);
  if (details.prompt.name === 'consent') return await consent.render(req, res, details);
  ctx.fail(res, 400, 'Unsupported interaction.');
}

/** POST: CSRF first, then abort/deny, the connect sign-in's end, and the prompt's own action. */
async function submit({ o, ctx, upstream, login, consent }: Steps, req: Request, res: Response, details: Details): Promise<void> {
  if (!checkCsrfToken(req)) {
    o.logger.warn('interaction form refused: bad CSRF token', { prompt: details.prompt.name });
    ctx.fail(res, 403, 'The form expired. Go back and try again.');
    return;
  }
  const choice = req.body?.action;
  if (choice === 'abort' || choice === 'deny') return await abortInteraction(ctx, req, res, details);
  if (await endConnectSignIn(o, res, details)) return;
  if (choice === 'switch-account') return await switchAccount(ctx, req, res, details);
  if (details.prompt.name === 'login' && typeof req.body?.upstream === 'string')
    return await startUpstreamLogin(ctx, upstream, res, details, req.body.upstream);
  if (details.prompt.name === 'login') return await login.submit(req, res, details);
  if (details.prompt.name === 'consent' && choice === 'approve') {
    await consent.approve(req, res, details, (await consent.baseGrant(details)).remembered, 'page');
    return;
  }
  ctx.fail(res, 400, 'Unsupported action.');
}

function interactionErrors({ o, ctx }: Steps) {
  return (err: Error & { status?: number; expose?: boolean }, _req: Request, res: Response, _next: NextFunction) => {
    // Client errors raised by express/body-parser (bad percent-encoding, oversized forms)
    // keep their 4xx status; only our own failures are a 500.
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    (status === 500 ? o.logger.error : o.logger.warn)('interaction failed', { error: err.name, detail: err.message, status });
    if (!res.headersSent)
      ctx.fail(
        res,
        status,
        status === 413 ? 'The form is too large.' : status === 500 ? 'The request could not be completed.' : 'The request is not valid.',
      );
  };
}
