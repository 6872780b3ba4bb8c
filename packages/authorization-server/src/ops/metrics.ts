/**
 * Prometheus metrics of one AS instance. Each instance owns its registry (tests and embedders
 * run several servers in one process), so nothing goes to prom-client's global registry.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from './logger.js';

export type { MetricsConfig } from '../config/types.js';
import type { MetricsConfig } from '../config/types.js';

export type CimdFetchOutcome = 'hit' | 'miss' | 'fail' | 'refused';

export interface AsMetrics {
  readonly registry: Registry;
  authorization(outcome: 'success' | 'error'): void;
  tokenIssued(grantType: string): void;
  oauthError(endpoint: string, error: string): void;
  cimdFetch(outcome: CimdFetchOutcome): void;
  registrationRateLimited(): void;
  login(outcome: 'success' | 'failure' | 'throttled'): void;
  httpRequest(method: string, route: string, status: number, seconds: number): void;
}

const GRANT_TYPES = new Set([
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
]);

/** Bounded label values: anything unexpected is counted as `other`. */
function bounded(value: string, allowed: RegExp): string {
  return allowed.test(value) ? value : 'other';
}

export function createAsMetrics(config: MetricsConfig = {}): AsMetrics {
  const registry = new Registry();
  const prefix = 'mcp_auth_';
  if (config.collectDefaultMetrics) collectDefaultMetrics({ register: registry, prefix });

  const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name: `${prefix}${name}`, help, labelNames, registers: [registry] });
  const authorizations = counter('authorizations_total', 'Authorization requests that ended with a response to the client, by outcome', [
    'outcome',
  ]);
  const tokens = counter('tokens_issued_total', 'Successful token endpoint responses, by grant type', ['grant_type']);
  const errors = counter('oauth_errors_total', 'Refused or failed OAuth requests, by endpoint and OAuth error code', ['endpoint', 'error']);
  const cimd = counter(
    'cimd_fetches_total',
    'Client ID Metadata Document look-ups: hit (shared cache), miss (fetched), fail, refused (policy)',
    ['outcome'],
  );
  const rateLimited = counter(
    'registration_rate_limited_total',
    'Dynamic Client Registration requests refused by the per-address rate limit',
  );
  const logins = counter('logins_total', 'Login form submissions, by outcome (success, failure, throttled)', ['outcome']);
  const loginFailures = counter('login_failures_total', 'Failed logins (unknown user or wrong password)');
  const duration = new Histogram({
    name: `${prefix}http_request_duration_seconds`,
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  // Counters exist (at 0) from the start, so dashboards and alerts see them before the first event.
  for (const outcome of ['success', 'error']) authorizations.inc({ outcome }, 0);
  for (const outcome of ['hit', 'miss', 'fail', 'refused']) cimd.inc({ outcome }, 0);
  for (const outcome of ['success', 'failure', 'throttled']) logins.inc({ outcome }, 0);
  for (const grant_type of ['authorization_code', 'refresh_token', 'client_credentials']) tokens.inc({ grant_type }, 0);

  return {
    registry,
    authorization: (outcome) => authorizations.inc({ outcome }),
    tokenIssued: (grantType) => tokens.inc({ grant_type: GRANT_TYPES.has(grantType) ? grantType : 'other' }),
    oauthError: (endpoint, error) =>
      errors.inc({ endpoint: bounded(endpoint, /^[a-z_.]{1,40}$/), error: bounded(error, /^[a-z_]{1,40}$/) }),
    cimdFetch: (outcome) => cimd.inc({ outcome }),
    registrationRateLimited: () => rateLimited.inc(),
    login(outcome) {
      logins.inc({ outcome });
      if (outcome === 'failure') loginFailures.inc();
    },
    httpRequest: (method, route, status, seconds) =>
      duration.observe({ method: bounded(method, /^[A-Z]{1,10}$/), route, status: String(status) }, seconds),
  };
}

/**
 * Counts the audit events other modules emit (login pages) without coupling them to metrics:
 * the logger handed to them observes `audit` fields on the way through.
 */
export function meteredLogger(logger: Logger, metrics: AsMetrics): Logger {
  const observe = (fields?: Record<string, unknown>) => {
    switch (fields?.audit) {
      case 'login.succeeded':
        metrics.login('success');
        break;
      case 'login.failed':
        metrics.login('failure');
        break;
      case 'login.throttled':
        metrics.login('throttled');
        break;
      default:
    }
  };
  return {
    debug: (m, f) => logger.debug?.(m, f),
    info(m, f) {
      observe(f);
      logger.info(m, f);
    },
    warn(m, f) {
      observe(f);
      logger.warn(m, f);
    },
    error: (m, f) => logger.error(m, f),
  };
}
