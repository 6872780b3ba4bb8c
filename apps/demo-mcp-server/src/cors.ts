import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Response headers a browser MCP client must read: the OAuth challenge above all (RFC 9728 discovery). */
const EXPOSED_HEADERS = 'WWW-Authenticate, DPoP-Nonce, Mcp-Session-Id, MCP-Protocol-Version';
const ALLOWED_METHODS = 'POST, GET, DELETE, OPTIONS';

/** Serialised origin of `value`, or undefined when it is not a usable origin (`null`, garbage). */
export function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * CORS for the MCP endpoint, for browser-based MCP clients on the allowed origins only. It runs
 * before the bearer check so that preflights (which carry no token) succeed and so that 401/403
 * challenges are readable cross-origin. Requests from other origins get no CORS headers; the
 * resource-server middleware then refuses them with 403 (Streamable HTTP §Security).
 */
export function mcpCors(allowedOrigins: readonly string[]): RequestHandler {
  const allowed = new Set(allowedOrigins.map((origin) => originOf(origin)).filter((o): o is string => o !== undefined));
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.origin;
    if (header === undefined) return next();
    const origin = originOf(header);
    const isAllowed = origin !== undefined && allowed.has(origin);
    res.vary('Origin');
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      if (!isAllowed) {
        res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden: Origin not allowed' }, id: null });
        return;
      }
      res
        .status(204)
        .set('access-control-allow-origin', origin)
        .set('access-control-allow-methods', ALLOWED_METHODS)
        // Bearer tokens travel in Authorization, which a `*` wildcard never covers: echo the request.
        .set('access-control-allow-headers', req.headers['access-control-request-headers'] ?? 'Authorization, Content-Type')
        .set('access-control-max-age', '600')
        .end();
      return;
    }
    if (isAllowed) {
      res.set('access-control-allow-origin', origin).set('access-control-expose-headers', EXPOSED_HEADERS);
    }
    next();
  };
}
