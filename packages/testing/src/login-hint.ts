/** Test-only sign-in by `login_hint`, so one test AS serves tokens for several subjects. */
import type { NextFunction, Request, Response } from 'express';
import type { AuthorizationServer, Store } from '@mcp-auth-kit/authorization-server';

/**
 * Mounted at `GET /interaction/:uid` in front of the AS (whose dev auto-login is on, loopback
 * only): signs in the account named by `login_hint` instead of the fixed dev user; anything
 * else (no hint, unknown or disabled account, consent) goes on to the AS.
 */
export function loginHintHandler(authorizationServer: () => AuthorizationServer, store: Store) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const provider = authorizationServer().provider;
      const details = await provider.interactionDetails(req, res);
      const hint = details.params.login_hint;
      if (details.prompt.name !== 'login' || typeof hint !== 'string') return next();
      const account = await store.accounts.findByUsername(hint);
      if (!account || account.disabled) return next();
      const target = await provider.interactionResult(req, res, { login: { accountId: account.id } }, { mergeWithLastSubmission: false });
      res.redirect(303, target);
    } catch {
      next();
    }
  };
}
