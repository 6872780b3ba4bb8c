/** Fixed-window rate limit on an express route, counted in the shared store's kv. */
import type { Request, Response, NextFunction, RequestHandler } from 'express';
import type { KeyValueStore } from '../storage/types.js';
import type { Logger } from '../ops/logger.js';
import { clientAddress } from './client-address.js';

export function rateLimit(
  kv: KeyValueStore,
  namespace: string,
  limit: { max: number; windowSeconds: number },
  logger: Logger,
  onLimited?: () => void,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const key = clientAddress(req);
      const count = await kv.increment(namespace, key, 1, limit.windowSeconds);
      if (count > limit.max) {
        onLimited?.();
        logger.warn('rate limit exceeded', { namespace, address: key });
        res.set('Retry-After', String(limit.windowSeconds));
        res.set('Cache-Control', 'no-store');
        res.status(429).json({
          error: 'invalid_request',
          error_description: 'too many requests from this address; retry later',
        });
        return;
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}
