import type { IncomingMessage } from 'node:http';

export class BodyError extends Error {
  constructor(readonly kind: 'too_large' | 'parse_error' | 'aborted') {
    super(kind);
  }
}

/** Reads the raw body up to `limit` bytes. */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) throw new BodyError('too_large');
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      size += buf.length;
      if (size > limit) throw new BodyError('too_large');
      chunks.push(buf);
    }
  } catch (err) {
    if (err instanceof BodyError) throw err;
    throw new BodyError('aborted');
  }
  return Buffer.concat(chunks);
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
