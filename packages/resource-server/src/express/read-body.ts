import type { IncomingMessage } from 'node:http';

export class BodyError extends Error {
  constructor(readonly kind: 'too_large' | 'parse_error' | 'aborted') {
    super(kind);
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * Reads the raw body up to `limit` bytes and calls `done` once, with the bytes or a
 * {@link BodyError}. Stream events, not `for await`: the async iterator creates several promises
 * and listeners per request, and with async hooks on (any `AsyncLocalStorage` in the process)
 * each promise runs them too; a cached MCP `POST` then needs no promise at all. A body over the
 * limit stops being read (the stream is paused) and is answered 413.
 */
export function readRawBody(req: IncomingMessage, limit: number, done: (err: BodyError | undefined, body: Buffer) => void): void {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    done(new BodyError('too_large'), EMPTY);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const settle = (err: BodyError | undefined, body: Buffer) => {
    if (settled) return;
    settled = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onAbort);
    req.off('close', onAbort);
    done(err, body);
  };
  function onData(chunk: Buffer | string): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (size > limit) {
      req.pause();
      settle(new BodyError('too_large'), EMPTY);
      return;
    }
    chunks.push(buf);
  }
  function onEnd(): void {
    settle(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  }
  // an error, or the connection closing before the end of the body
  function onAbort(): void {
    settle(new BodyError('aborted'), EMPTY);
  }
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onAbort);
  req.on('close', onAbort);
  // a 'data' listener starts the flow unless someone paused the stream explicitly
  if (req.isPaused()) req.resume();
}

/** {@link readRawBody} as a promise, for the paths that already wait on something else. */
export function readRawBodyAsync(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => readRawBody(req, limit, (err, body) => (err === undefined ? resolve(body) : reject(err))));
}

/** A JSON body as the MCP handler will see it: `undefined` when empty. @throws {BodyError} `parse_error` */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new BodyError('parse_error');
  }
}

export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = value.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

export function isFormContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  return value.split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** `true` once another middleware (express.json(), body-parser) consumed the stream. */
export function bodyAlreadyRead(req: IncomingMessage): boolean {
  return (req as { _body?: unknown })._body === true || req.readableEnded;
}
