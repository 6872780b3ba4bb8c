import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ProtectedResourceMetadata } from '../metadata.js';

const ALLOW = 'GET, HEAD, OPTIONS';

/**
 * Serves the RFC 9728 document at the given paths: GET/HEAD → 200 JSON, OPTIONS → 204 (CORS
 * preflight), anything else → 405 with `Allow`. Metadata is public, so `Access-Control-Allow-Origin: *`.
 */
export function createMetadataHandler(document: ProtectedResourceMetadata, paths: readonly string[]): RequestHandler {
  const body = JSON.stringify(document);
  const served = new Set(paths);
  return function protectedResourceMetadata(req: Request, res: Response, next: NextFunction): void {
    const path = (req.originalUrl ?? req.url).split('?')[0]!;
    if (!served.has(path)) {
      next();
      return;
    }
    res.set('access-control-allow-origin', '*');
    if (req.method === 'GET' || req.method === 'HEAD') {
      res.status(200).set('content-type', 'application/json; charset=utf-8').set('cache-control', 'public, max-age=300').send(body);
      return;
    }
    if (req.method === 'OPTIONS') {
      res
        .status(204)
        .set('access-control-allow-methods', ALLOW)
        .set('access-control-allow-headers', req.headers['access-control-request-headers'] ?? 'MCP-Protocol-Version, Content-Type')
        .set('access-control-max-age', '86400')
        .set('allow', ALLOW)
        .end();
      return;
    }
    res
      .status(405)
      .set('allow', ALLOW)
      .json({ error: 'invalid_request', error_description: `Method ${req.method} not allowed; use GET` });
  };
}
