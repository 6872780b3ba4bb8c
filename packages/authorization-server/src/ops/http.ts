/** Operational HTTP surface: request ids + access log + latency, health probes, /metrics. */
import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response, Router } from 'express';
import express from 'express';
import type { Store } from '../storage/types.js';
import type { Logger } from './logger.js';
import { clientAddress } from '../http/client-address.js';
import type { AsMetrics } from './metrics.js';
import { requestContext, requestIdFrom } from './request-context.js';
import { routeName } from './routes.js';

const QUIET_ROUTES = new Set(['healthz', 'readyz', 'metrics']);

/**
 * First middleware: accepts a well-formed `X-Request-Id` (or makes one), echoes it, runs the
 * rest of the request inside its context, and logs one line per request when it ends: method,
 * route, path without the query string (which may carry codes), status and duration.
 */
export function requestMiddleware(options: { logger: Logger; metrics?: AsMetrics; mountPath: string }): RequestHandler {
  return (req, res, next) => {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const path = (req.originalUrl ?? req.url).split('?')[0]!;
      const route = routeName(path, options.mountPath);
      const status = res.headersSent ? res.statusCode : 499;
      options.metrics?.httpRequest(req.method, route, status, seconds);
      const fields = {
        request_id: requestId,
        method: req.method,
        route,
        // The interaction uid doubles as the value of the interaction cookie, a connect ticket is
        // what a connect URL carries: never logged.
        path: path
          .replace(/\/(interaction|auth)\/[^/]+/, '/$1/:uid')
          .replace(/\/connect\/(?!callback$|signed-in$)[^/]+/, '/connect/:ticket')
          .slice(0, 200),
        status,
        duration_ms: Math.round(seconds * 1000 * 10) / 10,
        remote_address: clientAddress(req),
      };
      if (QUIET_ROUTES.has(route)) options.logger.debug?.('request', fields);
      else options.logger.info('request', fields);
    };
    res.once('finish', finish);
    res.once('close', finish);
    requestContext.run({ requestId }, next);
  };
}

export interface HealthState {
  /** Set when the process is shutting down: readiness answers 503 so balancers stop sending. */
  draining: boolean;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      timer.unref();
    }),
  ]);
}

/**
 * `/healthz` — liveness: the process serves HTTP (never touches the store, so a database
 * outage does not get every instance restarted). `/readyz` — readiness: the store answers
 * `ping()` within `timeoutMs` and the instance is not draining.
 */
export function healthRouter(store: Store, state: HealthState, logger: Logger, timeoutMs: number): Router {
  const router = express.Router();
  router.get('/healthz', (_req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  });
  router.get('/readyz', async (_req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store');
    if (state.draining) {
      res.status(503).json({ status: 'draining', checks: { store: 'skipped' } });
      return;
    }
    try {
      await withTimeout(store.ping(), timeoutMs);
      res.json({ status: 'ok', checks: { store: 'ok' } });
    } catch (err) {
      logger.warn('readiness check failed: store did not answer', { store: store.kind, error: (err as Error).name });
      res.status(503).json({ status: 'unavailable', checks: { store: 'down' } });
    }
  });
  return router;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `GET /metrics` in the Prometheus text format, optionally behind a bearer token. */
export function metricsHandler(metrics: AsMetrics, token?: string): RequestHandler {
  return async (req, res, next) => {
    try {
      res.set('Cache-Control', 'no-store');
      if (token) {
        const match = /^Bearer ([^\s]+)$/.exec(req.headers.authorization ?? '');
        if (!match || !sameSecret(match[1]!, token)) {
          res.set('WWW-Authenticate', 'Bearer realm="metrics"').status(401).json({ error: 'invalid_token' });
          return;
        }
      }
      res.set('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics());
    } catch (err) {
      next(err);
    }
  };
}
