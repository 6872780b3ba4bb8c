/**
 * The JSON admin API under the console path (issue 44): `<issuer><console.path>/api/…`, the one
 * API the console pages and the admin tool's operations share (both call the admin service). Off
 * unless `console.path` is configured. Every change is an audit event with the operator's `sub`
 * (service.ts); no answer carries a secret. Routes are listed in the AS README (§Operator console).
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import helmet from 'helmet';
import { StorageError } from '../storage/errors.js';
import type { Logger } from '../ops/logger.js';
import { type GuardOptions, type Operator, requireAdmin, requireChange } from './api-guard.js';
import { freshEnough } from './operator.js';
import { issueChangeToken } from './change-token.js';
import type { AdminService } from './service.js';
import { type Actor, AdminServiceError } from './types.js';

export interface AdminApiOptions extends GuardOptions {
  service: AdminService;
  logger: Logger;
}

const STATUS: Record<AdminServiceError['error'], number> = { not_found: 404, invalid_request: 400, conflict: 409 };

type Handler = (req: Request, res: Response, actor: Actor) => Promise<unknown>;

const actorOf = (res: Response): Actor => ({ sub: (res.locals.operator as Operator).account.id, via: 'console' });
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : undefined);
const body = (req: Request): Record<string, unknown> =>
  req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};

/** Runs a handler and answers its result as JSON (404 for undefined), or its refusal as an OAuth-style error. */
function json(handler: Handler) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const result = await handler(req, res, actorOf(res));
      if (result === undefined) return void res.status(404).json({ error: 'not_found', error_description: 'no such item' });
      res.json(result);
    } catch (error) {
      if (error instanceof AdminServiceError)
        return void res.status(STATUS[error.error]).json({ error: error.error, error_description: error.message });
      if (error instanceof StorageError && error.code === 'invalid_input')
        return void res.status(400).json({ error: 'invalid_request', error_description: error.message });
      next(error);
    }
  };
}

function readRoutes(r: Router, s: AdminService, o: AdminApiOptions): void {
  r.get(
    '/session',
    json(async (_req, res) => {
      const op = res.locals.operator as Operator;
      const fresh = freshEnough(op, o.maxAgeSeconds);
      const csrf = await issueChangeToken(o.store.kv, op.sessionUid);
      return { sub: op.account.id, username: op.account.username, admin: true, authTime: op.loginTs, fresh, csrf, signIn: o.signInUrl() };
    }),
  );
  r.get(
    '/clients',
    json(() => s.listClients()),
  );
  r.get(
    '/clients/:id',
    json((req) => s.getClient(String(req.params.id))),
  );
  r.get(
    '/cimd/policy',
    json(() => s.cimdPolicy()),
  );
  r.get(
    '/cimd/clients',
    json((req) => s.listCimdClients(str(req.query.status) as 'pending' | undefined)),
  );
  r.get(
    '/users',
    json((req) => s.listUsers(str(req.query.search))),
  );
  r.get(
    '/users/:id',
    json((req) => s.getUser(String(req.params.id))),
  );
  r.get(
    '/users/:id/grants',
    json((req) => s.listGrants({ accountId: String(req.params.id) })),
  );
  r.get(
    '/users/:id/connections',
    json((req) => s.userConnections(String(req.params.id))),
  );
  r.get(
    '/grants',
    json((req) =>
      s.listGrants({ accountId: str(req.query.account_id), clientId: str(req.query.client_id), resource: str(req.query.resource) }),
    ),
  );
  r.get(
    '/keys',
    json(async () => ({ signing: await s.listSigningKeys(), cookie: await s.cookieKeys() })),
  );
  r.get(
    '/audit',
    json((req) => {
      const q = req.query;
      return s.searchAudit({
        accountId: str(q.account_id),
        clientId: str(q.client_id),
        event: str(q.event),
        actor: str(q.actor),
        from: int(q.from),
        to: int(q.to),
        before: str(q.before),
        limit: int(q.limit),
      });
    }),
  );
}

function changeRoutes(r: Router, s: AdminService, change: ReturnType<typeof requireChange>): void {
  const post = (path: string, handler: Handler) => r.post(path, change, json(handler));
  post('/clients/:id/disable', (req, _res, a) => s.setClientDisabled(a, String(req.params.id), true));
  post('/clients/:id/enable', (req, _res, a) => s.setClientDisabled(a, String(req.params.id), false));
  post('/clients/:id/delete', async (req, _res, a) => {
    await s.deleteClient(a, String(req.params.id));
    return { deleted: true };
  });
  post('/cimd/policy', (req, _res, a) => {
    const b = body(req);
    return s.setCimdPolicy(a, {
      allowedHosts: b.allowedHosts as string[],
      deniedHosts: b.deniedHosts as string[],
      approvalRequired: b.approvalRequired as boolean,
    });
  });
  post('/cimd/clients/approve', (req, _res, a) => s.decideCimdClient(a, String(body(req).clientId ?? ''), 'approved'));
  post('/cimd/clients/deny', (req, _res, a) => s.decideCimdClient(a, String(body(req).clientId ?? ''), 'denied'));
  post('/users', (req, _res, a) => {
    const b = body(req);
    if (typeof b.username !== 'string') throw new AdminServiceError('username is required', 'invalid_request');
    return s.createUser(a, { username: b.username, password: str(b.password), displayName: str(b.displayName), admin: b.admin === true });
  });
  post('/users/:id/disable', (req, _res, a) => s.setUserDisabled(a, String(req.params.id), true));
  post('/users/:id/enable', (req, _res, a) => s.setUserDisabled(a, String(req.params.id), false));
  post('/users/:id/admin', (req, _res, a) => s.setUserAdmin(a, String(req.params.id), body(req).admin === true));
  post('/users/:id/identities/link', (req, _res, a) =>
    s.linkIdentity(a, String(req.params.id), String(body(req).issuer ?? ''), String(body(req).subject ?? '')),
  );
  post('/users/:id/identities/unlink', (req, _res, a) =>
    s.unlinkIdentity(a, String(req.params.id), String(body(req).issuer ?? ''), String(body(req).subject ?? '')),
  );
  post('/grants/revoke', async (req, _res, a) => {
    const b = body(req);
    return { revoked: await s.revokeGrant(a, String(b.accountId ?? ''), String(b.clientId ?? '')) };
  });
  post('/keys/signing/rotate', (req, _res, a) => {
    const retire = body(req).retireAfterSeconds;
    return s.rotateSigningKeys(a, retire === undefined ? undefined : Number(retire));
  });
  post('/keys/cookie/rotate', (_req, _res, a) => s.rotateCookieKeys(a));
}

/** The API router, mounted at `<console path>/api`. */
export function createAdminApiRouter(o: AdminApiOptions): Router {
  const router = express.Router();
  router.use(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      xFrameOptions: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
    }),
  );
  router.use((_req, res, next) => {
    res.set('cache-control', 'no-store');
    next();
  });
  router.use(express.json({ limit: '16kb' }));
  router.use(requireAdmin(o));
  readRoutes(router, o.service, o);
  changeRoutes(router, o.service, requireChange(o));
  router.use((_req: Request, res: Response) => res.status(404).json({ error: 'not_found', error_description: 'no such admin API route' }));
  router.use((err: Error & { type?: string }, _req: Request, res: Response, _next: NextFunction): void => {
    if (err.type === 'entity.parse.failed' || err.type === 'entity.too.large')
      return void res.status(400).json({ error: 'invalid_request', error_description: 'the body is not JSON of at most 16 kB' });
    o.logger.error('admin API error', { error: err.name, detail: err.message });
    res.status(500).json({ error: 'server_error' });
  });
  return router;
}
