/**
 * Who may use the JSON admin API (issue 44): a browser session of this AS (our own login page),
 * an account with the admin role, and for a change: a sign-in at most `maxAgeSeconds` old, the
 * request from the AS's own origin (Origin, Sec-Fetch-Site), a JSON body (no cross-site form can
 * send one without CORS), and an unspent one-time change token bound to the session.
 */
import type { NextFunction, Request, Response } from 'express';
import type Provider from 'oidc-provider';
import type { Store } from '../storage/types.js';
import { spendChangeToken } from './change-token.js';
import { freshEnough, lookUpOperator, type Operator } from './operator.js';

export type { Operator } from './operator.js';

export interface GuardOptions {
  provider: Provider;
  store: Store;
  production: boolean;
  issuerOrigin: string;
  maxAgeSeconds: number;
  signInUrl: () => string;
}

const refuse = (res: Response, status: number, error: string, description: string, extra: Record<string, unknown> = {}) =>
  res.status(status).json({ error, error_description: description, ...extra });

/** Every API request: a signed-in admin (401 login_required, 403 access_denied). */
export function requireAdmin(o: GuardOptions) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const found = await lookUpOperator(o.provider, o.store, o, req, res);
      if (found.kind === 'none') return void refuse(res, 401, 'login_required', 'sign in to the console first', { sign_in: o.signInUrl() });
      if (found.kind === 'not-admin') return void refuse(res, 403, 'access_denied', 'this account is not an admin of the console');
      res.locals.operator = found.operator;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** A change: same origin, JSON, fresh sign-in, one unspent change token (403 / 401 / 415 otherwise). */
export function requireChange(o: GuardOptions) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const operator = res.locals.operator as Operator;
      const site = req.get('sec-fetch-site');
      if (req.get('origin') !== o.issuerOrigin || (site !== undefined && site !== 'same-origin'))
        return void refuse(res, 403, 'access_denied', 'a change must come from the console itself (Origin)');
      if (!req.is('application/json')) return void refuse(res, 415, 'invalid_request', 'a change is sent as application/json');
      if (!freshEnough(operator, o.maxAgeSeconds))
        return void refuse(res, 401, 'login_required', `a change needs a sign-in at most ${o.maxAgeSeconds} s old`, {
          sign_in: o.signInUrl(),
        });
      if (!(await spendChangeToken(o.store.kv, operator.sessionUid, req.get('x-csrf-token'))))
        return void refuse(res, 403, 'access_denied', 'missing, spent or foreign change token (GET the session for a new one)');
      next();
    } catch (error) {
      next(error);
    }
  };
}
