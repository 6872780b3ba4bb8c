/**
 * The express handlers around the MCP endpoint that answer without it: the DNS-rebinding Host
 * check, unknown paths, and errors (bad input never surfaces as a stack or an HTML page).
 */
import { validateHostHeader } from '@modelcontextprotocol/server';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** An error as the MCP layer's out-of-band error sink takes it. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Default sink for the MCP layer's out-of-band errors. Client rejections carry client-supplied
 * header values in their message: only their kind is logged, and every line is bounded.
 */
export function defaultOnError(error: Error): void {
  const rejection = /^Rejected inbound request \([^)]*\)/.exec(error.message);
  const line = (rejection ? rejection[0] : error.message).replace(/[\r\n]+/g, ' ').slice(0, 300);
  process.stderr.write(`demo-mcp-server: ${line}\n`);
}

/** DNS rebinding (Streamable HTTP §Security): only our own names may be in Host, whatever the Origin. */
export function hostGuard(allowedHostnames: string[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const result = validateHostHeader(req.headers.host, allowedHostnames);
    if (result.ok) return next();
    res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden: Host not allowed' }, id: null });
  };
}

/** Unknown paths: a plain 404, never express's HTML page. */
export function notFound(_req: Request, res: Response): void {
  res.status(404).json({ error: 'not_found' });
}

/** Bad input (e.g. a body a parser refused) must never surface as a stack or a 500. */
export function errorHandler(onError: (error: Error) => void) {
  return (error: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    const raw = (error as { status?: unknown }).status;
    const status = typeof raw === 'number' && raw >= 400 && raw < 600 ? raw : 500;
    if (status >= 500) onError(asError(error));
    if (res.headersSent) return;
    const parseError = (error as { type?: unknown }).type === 'entity.parse.failed';
    res.status(status).json({
      jsonrpc: '2.0',
      error:
        status >= 500
          ? { code: -32603, message: 'Internal error' }
          : { code: parseError ? -32700 : -32600, message: parseError ? 'Parse error' : 'Invalid request' },
      id: null,
    });
  };
}
