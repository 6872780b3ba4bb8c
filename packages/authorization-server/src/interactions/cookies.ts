/**
 * The one way the AS reads a cookie of its own (CSRF token, upstream flow handle): jshttp's
 * `cookie` parser, which never throws on what a client sends. A value that is not valid
 * percent-encoding (`%zz`) comes back as sent rather than as a URIError, so a malformed
 * header is a failed check (403 / unknown flow), never a 500. With duplicate names the first
 * one wins: browsers send the cookie of the longest matching path first (RFC 6265 §5.4).
 */
import { parseCookie } from 'cookie';
import type { IncomingMessage } from 'node:http';

export function readCookie(req: Pick<IncomingMessage, 'headers'>, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  return parseCookie(header)[name];
}
