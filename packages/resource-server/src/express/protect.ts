import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Credentials } from '../credentials.js';
import { ResourceServerError } from '../errors.js';
import type { InternalResourceServerCore } from '../resource-server-core.js';
import type { AuthenticatedRequest } from '../types.js';
import { notifyValidation } from '../validation-hook.js';
import {
  BodyError,
  bodyAlreadyRead,
  isFormContentType,
  isJsonContentType,
  parseJsonBody,
  readRawBody,
  readRawBodyAsync,
} from './read-body.js';

/** Sends a JSON-RPC error without `id` (we do not know it) — same shape the SDK uses. */
function sendJsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).set('cache-control', 'no-store').json({ jsonrpc: '2.0', id: null, error: { code, message } });
}

/** The one place a failure becomes a response. */
function fail(core: InternalResourceServerCore, res: Response, err: unknown, credentials: Credentials | undefined): void {
  if (res.headersSent) return;
  if (err instanceof BodyError) {
    if (err.kind === 'too_large') {
      // the rest of the body stays unread: this connection cannot carry another request
      res.set('connection', 'close');
      sendJsonRpcError(res, 413, -32600, 'Request body too large');
    } else if (err.kind === 'parse_error') sendJsonRpcError(res, 400, -32700, 'Parse error: invalid JSON');
    else sendJsonRpcError(res, 400, -32600, 'Request body could not be read');
    return;
  }
  const refusal =
    err instanceof ResourceServerError ? err : new ResourceServerError('internal_error', { cause: err, detail: { message: String(err) } });
  const response = core.refuse(refusal, credentials?.token, credentials !== undefined ? { scheme: credentials.scheme } : {});
  res.status(response.status).set(response.headers).json(response.body);
}

/** The steps after authentication: scope policy on the (parsed) body, `req.auth`, `next()`. */
function admit(
  core: InternalResourceServerCore,
  req: Request,
  res: Response,
  next: NextFunction,
  authenticated: AuthenticatedRequest,
  contentType: string | undefined,
  parsed: unknown,
): void {
  const { verified } = authenticated;
  let body = parsed;
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
  req.auth = core.toAuthInfo(verified, authenticated);
  // RFC 9449 §8.2: a nonce about to expire is replaced on a successful response
  if (authenticated.dpopNonce !== undefined) res.set('dpop-nonce', authenticated.dpopNonce);
  const { logger } = core.options;
  if (logger?.onValidation !== undefined) notifyValidation(logger, { ok: true, source: verified.source });
  next();
}

/**
 * `true` when this middleware reads and parses the JSON body itself (no body parser ran).
 * `body`: `req.body`, read once per request by the caller (a property express does not define
 * is looked up through the whole prototype chain of the request).
 */
function bodyToRead(req: Request, contentType: string | undefined, body: unknown): boolean {
  return req.method === 'POST' && body === undefined && isJsonContentType(contentType) && !bodyAlreadyRead(req);
}

/** The JSON body read by this middleware, parsed and left on `req.body`. */
function takeJsonBody(req: Request, raw: Buffer): unknown {
  const body = parseJsonBody(raw);
  // the SDK transports accept this pre-parsed body (handleRequest(req, res, req.body))
  req.body = body;
  return body;
}

/** RFC 6750 §2.2: whether a form body carries `access_token` (refused, not ignored); the form is read to tell. */
async function formCarriesToken(req: Request, maxBodyBytes: number): Promise<boolean> {
  let form: unknown = req.body;
  if (form === undefined && !bodyAlreadyRead(req)) {
    form = new URLSearchParams((await readRawBodyAsync(req, maxBodyBytes)).toString('utf8'));
    req.body = Object.fromEntries(form as URLSearchParams);
  }
  return form instanceof URLSearchParams
    ? form.has('access_token')
    : typeof form === 'object' && form !== null && Object.hasOwn(form, 'access_token');
}

/**
 * The full path. `credentials` undefined: a form body, read first (its `access_token` is
 * refused).
 */
async function protectAsync(
  core: InternalResourceServerCore,
  req: Request,
  res: Response,
  next: NextFunction,
  contentType: string | undefined,
  extracted: Credentials | undefined,
): Promise<void> {
  let credentials = extracted;
  try {
    let tokenInBody = false;
    if (credentials === undefined) {
      tokenInBody = await formCarriesToken(req, core.options.maxBodyBytes);
      credentials = core.extractCredentials({ authorization: req.headers.authorization, url: req.originalUrl ?? req.url, tokenInBody });
    }
    const authenticated = await core.authenticate(
      {
        authorization: req.headers.authorization,
        // headersDistinct builds every header's array: only worth it when a DPoP header came
        dpop: req.headers.dpop === undefined ? undefined : req.headersDistinct.dpop,
        method: req.method,
        url: req.originalUrl ?? req.url,
        tokenInBody,
      },
      credentials,
    );
    let body: unknown = req.body;
    if (bodyToRead(req, contentType, body)) {
      body = takeJsonBody(req, await readRawBodyAsync(req, core.options.maxBodyBytes));
    }
    admit(core, req, res, next, authenticated, contentType, body);
  } catch (err) {
    fail(core, res, err, credentials);
  }
}

/**
 * express adapter of {@link ResourceServerCore}: Origin/Host guard, bearer extraction, token
 * validation, JSON body parsing (only once the token is valid, and only when no body parser ran),
 * MCP scope policy; then `req.auth` (SDK `AuthInfo`) and `next()`. Refusals never reach the MCP
 * handler.
 *
 * A request whose token the cache answers needs no promise at all: it runs synchronously, or,
 * when it has a JSON body to read, on the body stream's events ({@link admitAfterBody}).
 * Everything else (a form body, DPoP, a token to verify) continues in {@link protectAsync} with
 * the same steps.
 */
export function createProtectHandler(core: InternalResourceServerCore): RequestHandler {
  const { maxBodyBytes } = core.options;

  /** A cached token with a JSON body to read: the body's stream events, then {@link admit}. */
  function admitAfterBody(
    req: Request,
    res: Response,
    next: NextFunction,
    authenticated: AuthenticatedRequest,
    contentType: string | undefined,
    credentials: Credentials,
  ): void {
    readRawBody(req, maxBodyBytes, (err, raw) => {
      try {
        if (err !== undefined) throw err;
        admit(core, req, res, next, authenticated, contentType, takeJsonBody(req, raw));
      } catch (error) {
        fail(core, res, error, credentials);
      }
    });
  }

  return function protectMcpEndpoint(req: Request, res: Response, next: NextFunction): void | Promise<void> {
    let credentials: Credentials | undefined;
    try {
      // each read of a request property is a slow lookup (express swaps the request's
      // prototype per request): the headers and the socket are read once
      const headers = req.headers;
      const socket = req.socket;
      core.checkTransport({ origin: headers.origin, host: headers.host });
      const contentType = headers['content-type'];
      if (isFormContentType(contentType)) return protectAsync(core, req, res, next, contentType, undefined);
      credentials = core.extractCredentials(
        { authorization: headers.authorization, url: req.originalUrl ?? req.url, tokenInBody: false },
        socket,
      );
      const cachedAnswer = core.authenticateFromCache(credentials, socket);
      if (cachedAnswer === undefined) return protectAsync(core, req, res, next, contentType, credentials);
      const body: unknown = req.body;
      if (bodyToRead(req, contentType, body)) return admitAfterBody(req, res, next, cachedAnswer, contentType, credentials);
      admit(core, req, res, next, cachedAnswer, contentType, body);
    } catch (err) {
      fail(core, res, err, credentials);
    }
  };
}
