/** The demo's Prometheus metrics at `/metrics`: token validations by outcome and request latency. */
import type { ResourceServerLogger, ValidationOutcome } from '@mcp-auth-kit/resource-server';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, Histogram, Registry } from 'prom-client';

export interface DemoMetrics {
  registry: Registry;
  validation(outcome: ValidationOutcome): void;
  observe(method: string, route: string, status: number, seconds: number): void;
}

/** Token validations (via the resource server's `onValidation` hook) and request latency. */
export function demoMetrics(): DemoMetrics {
  const registry = new Registry();
  const validations = new Counter({
    name: 'mcp_resource_token_validations_total',
    help: 'Protected requests by outcome: ok, or refused with the reason',
    labelNames: ['outcome', 'reason'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'mcp_resource_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  validations.inc({ outcome: 'ok', reason: '' }, 0);
  return {
    registry,
    validation(outcome: ValidationOutcome) {
      validations.inc(outcome.ok ? { outcome: 'ok', reason: '' } : { outcome: 'refused', reason: outcome.reason });
    },
    observe(method: string, route: string, status: number, seconds: number) {
      duration.observe({ method: /^[A-Z]{1,10}$/.test(method) ? method : 'other', route, status: String(status) }, seconds);
    },
  };
}

/** The caller's logger with every validation also counted. */
export function countingLogger(metrics: DemoMetrics, logger: ResourceServerLogger | undefined): ResourceServerLogger {
  return {
    ...(logger?.debug && { debug: logger.debug.bind(logger) }),
    ...(logger?.info && { info: logger.info.bind(logger) }),
    ...(logger?.warn && { warn: logger.warn.bind(logger) }),
    onValidation: (outcome) => {
      metrics.validation(outcome);
      logger?.onValidation?.(outcome);
    },
  };
}

/** Times every request, labelled by a fixed set of routes (never a caller-chosen path). */
export function observeRequests(metrics: DemoMetrics, mcpPath: string): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const route =
        req.path === mcpPath
          ? 'mcp'
          : req.path.startsWith('/.well-known/')
            ? 'metadata'
            : ['/healthz', '/readyz', '/metrics'].includes(req.path)
              ? req.path.slice(1)
              : 'other';
      metrics.observe(req.method, route, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}

/** `GET /metrics`: the registry in Prometheus text format. */
export function metricsHandler(metrics: DemoMetrics): RequestHandler {
  return async (_req, res, next) => {
    try {
      res
        .set('cache-control', 'no-store')
        .set('content-type', metrics.registry.contentType)
        .send(await metrics.registry.metrics());
    } catch (error) {
      next(error);
    }
  };
}
