/**
 * Sign-in through an upstream OpenID Connect provider: the button's submission sends the
 * browser there, its callback comes back to one fixed URL, and the interaction's own path
 * finishes the login (where oidc-provider's interaction cookie is sent).
 */
import type { Request, RequestHandler, Response, Router } from 'express';
import { audit } from '../ops/audit.js';
import { clientAddress } from '../http/client-address.js';
import type { UpstreamLogin } from '../upstream/login.js';
import type { Details, InteractionContext } from './context.js';
import { readCookie } from './cookies.js';

const UPSTREAM_COOKIE = 'mcp_upstream';
const UPSTREAM_DONE = 'upstream-done';

/** The login form's "Sign in with <name>" button (`upstream` = the provider's index). */
export async function startUpstreamLogin(
  ctx: InteractionContext,
  upstream: UpstreamLogin | undefined,
  res: Response,
  details: Details,
  choice: string,
): Promise<void> {
  const providers = ctx.o.upstream;
  const index = Number(choice);
  if (!upstream || !Number.isInteger(index) || !providers[index])
    return ctx.fail(res, 400, 'Unknown sign-in provider.', ctx.action(details.uid));
  let started: { url: string; handle: string };
  try {
    started = await upstream.start(index, details.uid);
  } catch (err) {
    ctx.o.logger.warn('upstream provider unavailable', { provider: providers[index]!.name, reason: (err as Error).message });
    return ctx.fail(res, 502, `${providers[index]!.name} is not reachable right now. Try again later.`, ctx.action(details.uid));
  }
  // Lax: the provider brings the browser back with a top-level GET from another site.
  res.cookie(UPSTREAM_COOKIE, started.handle, {
    path: `${ctx.base}/upstream`,
    httpOnly: true,
    secure: ctx.o.secureCookies,
    sameSite: 'lax',
    maxAge: 600_000,
  });
  res.redirect(303, started.url);
}

export function mountUpstreamRoutes(
  router: Router,
  ctx: InteractionContext,
  upstream: UpstreamLogin | undefined,
  load: RequestHandler,
  pageSecurity: RequestHandler,
): void {
  const { o } = ctx;
  // The upstream provider sends the browser back here (one fixed redirect URI for every
  // interaction); the flow cookie binds the response to this browser, `state` to the flow.
  router.get('/upstream/callback', async (req: Request, res: Response, next) => {
    if (!upstream) return ctx.fail(res, 404, 'Not found.');
    try {
      const query = new URL(req.originalUrl, 'http://x').search;
      const handle = readCookie(req, UPSTREAM_COOKIE);
      res.clearCookie(UPSTREAM_COOKIE, { path: `${ctx.base}/upstream`, httpOnly: true, secure: o.secureCookies, sameSite: 'lax' });
      const result = await upstream.complete(handle, query);
      if (!result.ok) {
        audit(o.logger, 'login.failed', {
          method: 'upstream',
          provider: result.provider,
          reason: result.reason,
          detail: result.detail,
          ip: clientAddress(req),
        });
        const retry = result.uid ? ctx.action(result.uid) : undefined;
        if (result.reason === 'no-account') {
          return ctx.fail(
            res,
            403,
            `Your ${result.provider} account is not linked to an account here, and new accounts cannot be created this way. Ask the administrator to create or link your account.`,
            retry,
          );
        }
        if (result.reason === 'disabled') return ctx.fail(res, 403, 'This account is disabled.', retry);
        if (result.reason === 'unknown-flow')
          return ctx.fail(
            res,
            400,
            'This sign-in attempt has expired or was started in another browser. Start again from the application.',
          );
        if (result.detail === 'access_denied') return ctx.fail(res, 401, `Sign-in with ${result.provider} was cancelled.`, retry);
        return ctx.fail(res, 502, `Sign-in with ${result.provider} did not complete. Try again.`, retry);
      }
      await o.store.kv.set(
        UPSTREAM_DONE,
        result.uid,
        { accountId: result.account.id, provider: result.provider, created: result.created },
        120,
      );
      res.redirect(303, `${ctx.action(result.uid)}/upstream`);
    } catch (err) {
      next(err);
    }
  });

  // Back on the interaction's own path, where oidc-provider's interaction cookie is sent.
  router.get('/:uid/upstream', load, pageSecurity, async (req: Request, res: Response, next) => {
    try {
      const details = res.locals.details as Details;
      const done = await o.store.kv.get<{ accountId: string; provider: string; created: boolean }>(UPSTREAM_DONE, details.uid);
      if (!done || details.prompt.name !== 'login') return ctx.fail(res, 400, 'This sign-in request has expired or is invalid.');
      await o.store.kv.delete(UPSTREAM_DONE, details.uid);
      audit(o.logger, 'login.upstream', {
        provider: done.provider,
        account_id: done.accountId,
        created: done.created,
        ip: clientAddress(req),
      });
      if (done.created) audit(o.logger, 'account.created', { account_id: done.accountId, provider: done.provider });
      await ctx.finish(req, res, { login: { accountId: done.accountId } }, false);
    } catch (err) {
      next(err);
    }
  });
}
