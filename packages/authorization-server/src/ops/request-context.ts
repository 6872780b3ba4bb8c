/**
 * Per-request context (request id) carried through async work with AsyncLocalStorage, so
 * that every log line written while serving a request — including oidc-provider's events —
 * carries the same `request_id`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Logger } from './logger.js';

export interface RequestContext {
  requestId: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

/** Accepted incoming `X-Request-Id` values (anything else is replaced by a fresh id). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && REQUEST_ID.test(value) ? value : randomUUID();
}

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/** Adds `request_id` of the current request (if any) to every line of `logger`. */
export function withRequestId(logger: Logger): Logger {
  const add = (fields?: Record<string, unknown>) => {
    const id = currentRequestId();
    return id && !(fields && 'request_id' in fields) ? { request_id: id, ...fields } : fields;
  };
  return {
    debug: (m, f) => logger.debug?.(m, add(f)),
    info: (m, f) => logger.info(m, add(f)),
    warn: (m, f) => logger.warn(m, add(f)),
    error: (m, f) => logger.error(m, add(f)),
  };
}
