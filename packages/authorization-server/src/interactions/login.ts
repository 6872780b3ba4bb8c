/** The login step with a local account: the page and the password check behind its brakes. */
import type { Request, Response } from 'express';
import { signInRefusal } from '../accounts/account-origin.js';
import { audit } from '../ops/audit.js';
import { clientAddress } from '../http/client-address.js';
import { dummyHash, verifyPassword } from '../accounts/passwords.js';
import type { Details, InteractionContext } from './context.js';
import { issueCsrfToken } from './csrf.js';
import { loginPage } from './pages.js';
import { LoginThrottle } from './throttle.js';
import { isConnectSignIn } from '../third-party/sign-in.js';
import { isConsoleSignIn } from '../admin/sign-in.js';

export interface LoginStep {
  render(res: Response, details: Details, error?: string, username?: string, status?: number): Promise<void>;
  /** The login form's submission: throttle, password check, then back to oidc-provider. */
  submit(req: Request, res: Response, details: Details): Promise<void>;
}

export function createLoginStep(ctx: InteractionContext): LoginStep {
  const { o } = ctx;
  const limits = o.loginLimits;
  const throttle = new LoginThrottle(o.store.kv, limits);
  const upstreamNames = o.upstream.map((p) => p.name);

  async function render(res: Response, details: Details, error?: string, username?: string, status?: number) {
    const client = await ctx.describeClient(details);
    const csrf = issueCsrfToken(res, ctx.action(details.uid), o.secureCookies);
    res
      .status(status ?? (error ? 401 : 200))
      .type('html')
      .send(
        loginPage({
          serviceName: o.serviceName,
          action: ctx.action(details.uid),
          csrf,
          stylesheet: ctx.stylesheet,
          clientName: client.clientName,
          unverified: client.unverified,
          error,
          username,
          upstream: upstreamNames,
          ...(isConnectSignIn(details.params) && { intro: 'Sign in to connect an account of another service to your account here.' }),
          ...(isConsoleSignIn(details.params) && { intro: 'Sign in to the operator console.' }),
        }),
      );
  }

  async function submit(req: Request, res: Response, details: Details) {
    const username = typeof req.body?.username === 'string' ? req.body.username.trim().slice(0, 200) : '';
    const password = typeof req.body?.password === 'string' ? req.body.password : '';
    const address = clientAddress(req);
    const failed = (reason: string) =>
      audit(o.logger, 'login.failed', { method: 'password', username, ip: address, reason, client_id: String(details.params.client_id) });
    // Counted before the password is checked (see throttle.ts): parallel guesses cannot all pass.
    const brake = await throttle.attempt(address, username);
    if (brake) {
      audit(o.logger, 'login.throttled', { username, ip: address, limit: brake });
      // The counters expire at most one window after the first attempt they counted.
      res.set('Retry-After', String(limits.windowSeconds));
      await render(res, details, 'Too many failed attempts. Try again later.', username, 429);
      return;
    }
    const account = username ? await o.store.accounts.findByUsername(username) : undefined;
    // Unknown users cost one scrypt too, so timing does not reveal which usernames exist.
    const ok = await verifyPassword(password, account?.passwordHash ?? (await dummyHash()));
    if (!account || !ok || account.disabled) {
      failed(!account ? 'unknown-user' : !ok ? 'wrong-password' : 'disabled');
      // The password was right: saying the account is disabled reveals nothing to its owner.
      if (account && ok) await render(res, details, 'This account is disabled.', username, 403);
      else await render(res, details, 'Invalid username or password.', username);
      return;
    }
    const refusal = signInRefusal(account, o);
    if (refusal) {
      failed(refusal);
      await render(res, details, 'The demo account cannot sign in on this server.', username, 403);
      return;
    }
    await throttle.succeeded(address, username);
    audit(o.logger, 'login.succeeded', {
      method: 'password',
      account_id: account.id,
      ip: address,
      client_id: String(details.params.client_id),
    });
    await ctx.finish(req, res, { login: { accountId: account.id } }, false);
  }

  return { render, submit };
}
