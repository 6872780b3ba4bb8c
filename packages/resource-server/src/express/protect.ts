import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ResourceServerError } from '../errors.js';
import type { ResourceServerCore } from '../resource-server-core.js';
import { notifyValidation } from '../validation-hook.js';
import { BodyError, bodyAlreadyRead, isFormContentType, isJsonContentType, readRawBody } from './read-body.js';

/** Sends a JSON-RPC error without `id` (we do not know it) — same shape the SDK uses. */
function sendJsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).set('cache-control', 'no-store').json({ jsonrpc: '2.0', id: null, error: { code, message } });
}

/**
 * express adapter of {@link ResourceServerCore}: Origin/Host guard, bearer extraction, token
 * validation, JSON body parsing (only once the token is valid, and only when no body parser ran),
 * MCP scope policy; then `req.auth` (SDK `AuthInfo`) and `next()`. Refusals never reach the MCP
 * handler.
 */
export function createProtectHandler(core: ResourceServerCore): RequestHandler {
  return async function protectMcpEndpoint(req: Request, res: Response, next: NextFunction): Promise<void> {
    let token: string | undefined;
    let scheme: 'bearer' | 'dpop' | undefined;
    try {
      core.checkTransport({ origin: req.headers.origin, host: req.headers.host });

      let tokenInBody = false;
      const contentType = req.headers['content-type'];
      if (isFormContentType(contentType)) {
        // RFC 6750 §2.2 form-body tokens are refused, not ignored; the form is read to tell.
        let form: unknown = req.body;
        if (form === undefined && !bodyAlreadyRead(req)) {
          form = new URLSearchParams((await readRawBody(req, core.options.maxBodyBytes)).toString('utf8'));
          req.body = Object.fromEntries(form as URLSearchParams);
        }
        tokenInBody =
          form instanceof URLSearchParams
            ? form.has('access_token')
            : typeof form === 'object' && form !== null && Object.hasOwn(form, 'access_token');
      }
      const credentials = core.extractCredentials({
        authorization: req.headers.authorization,
        url: req.originalUrl ?? req.url,
        tokenInBody,
      });
      token = credentials.token;
      scheme = credentials.scheme;
      const authenticated = await core.authenticate({
        authorization: req.headers.authorization,
        // headersDistinct builds every header's array: only worth it when a DPoP header came
        dpop: req.headers.dpop === undefined ? undefined : req.headersDistinct.dpop,
        method: req.method,
        url: req.originalUrl ?? req.url,
        tokenInBody,
      });
      const { verified } = authenticated;

      let body: unknown = req.body;
      if (body === undefined && req.method === 'POST' && isJsonContentType(contentType) && !bodyAlreadyRead(req)) {
        const raw = await readRawBody(req, core.options.maxBodyBytes);
        try {
          body = raw.length === 0 ? undefined : (JSON.parse(raw.toString('utf8')) as unknown);
        } catch {
          throw new BodyError('parse_error');
        }
        // the SDK transports accept this pre-parsed body (handleRequest(req, res, req.body))
        req.body = body;
      }
      // express.text()/express.raw() leave a string or Buffer: parse a copy so the policy sees
      // the messages the MCP handler will see
      if ((typeof body === 'string' || Buffer.isBuffer(body)) && isJsonContentType(contentType)) {
        try {
          body = JSON.parse(body.toString()) as unknown;
        } catch {
          throw new BodyError('parse_error');
        }
      }
      core.checkScopes(verified, body);
      (req as Request & { auth?: unknown }).auth = core.toAuthInfo(verified, {
        scheme: authenticated.scheme,
        jkt: authenticated.jkt,
      });
      // RFC 9449 §8.2: a nonce about to expire is replaced on a successful response
      if (authenticated.dpopNonce !== undefined) res.set('dpop-nonce', authenticated.dpopNonce);
      notifyValidation(core.options.logger, { ok: true, source: verified.source });
      next();
    } catch (err) {
      if (res.headersSent) return;
      if (err instanceof BodyError) {
        if (err.kind === 'too_large') sendJsonRpcError(res, 413, -32600, 'Request body too large');
        else if (err.kind === 'parse_error') sendJsonRpcError(res, 400, -32700, 'Parse error: invalid JSON');
        else sendJsonRpcError(res, 400, -32600, 'Request body could not be read');
        return;
      }
      const refusal =
        err instanceof ResourceServerError
          ? err
          : new ResourceServerError('internal_error', { cause: err, detail: { message: String(err) } });
      const response = core.refuse(refusal, token, scheme !== undefined ? { scheme } : {});
      res.status(response.status).set(response.headers).json(response.body);
    }
  };
}
