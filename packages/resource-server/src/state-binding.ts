/**
 * MCP state bound to the user who created it (security best practices, 2026-07-28 "State Handle
 * Hijacking" and 2025-11-25 "Session Hijacking"): a state handle or an `Mcp-Session-Id` is
 * minted for the caller of a verified token and carries a MAC over the caller — the token's
 * issuer, `sub` and `client_id` — so a handle presented with anyone else's token is refused,
 * however it was obtained or guessed. "MCP servers MUST NOT treat possession of a state handle as
 * authentication" and "SHOULD bind handles server-side to the authenticated user … derived from
 * the verified token rather than supplied by the client".
 *
 * Stateless: `v1.<128 random bits>.<expiry>.<data>.<HMAC-SHA-256>`, so every replica that shares
 * the secret checks every handle without a store; expired handles are refused. `data` is a small
 * value of the caller's own (e.g. a list position), readable by whoever holds the handle but
 * covered by the MAC: keep secrets out of it. Handles are visible
 * ASCII (base64url, digits, dots), valid as session ids (Streamable HTTP 2025-11-25 §Session
 * Management).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { isCanonicalBase64url } from '@mcp-auth-kit/protocol';
import { DEFAULTS } from './config/defaults.js';
import type { McpAuthInfo } from './types.js';

export interface StateBindingOptions {
  /** At least 32 bytes (a string of ≥ 32 characters, or bytes), the same on every replica. Keep it secret. */
  secret: string | Uint8Array;
  /** How long a handle stays valid, in seconds (default 3600). */
  ttlSeconds?: number;
  /** The clock, in epoch seconds (tests). */
  now?: () => number;
}

export interface StateBinding {
  /**
   * A new handle bound to the caller of `auth` (a verified token's `req.auth` / `authInfo`),
   * carrying `data` (at most 256 characters; default empty).
   */
  mint(auth: McpAuthInfo | undefined, data?: string): string;
  /** Whether `handle` was minted by this binding for this same caller and has not expired. */
  owns(auth: McpAuthInfo | undefined, handle: unknown): boolean;
  /** The `data` of a handle this caller owns; undefined for any other handle. */
  open(auth: McpAuthInfo | undefined, handle: unknown): string | undefined;
  /**
   * 2025-11-25 sessions, express middleware after `rs.protect`: a request whose `Mcp-Session-Id`
   * was not minted for its caller is answered 404 like an unknown session (nothing tells the
   * caller that the session exists), and while a request runs, {@link sessionIdGenerator} mints
   * for its caller.
   */
  sessions(req: Request, res: Response, next: NextFunction): void;
  /** The transport's `sessionIdGenerator`: a session id bound to the caller of the current request. */
  sessionIdGenerator(): string;
}

const VERSION = 'v1';
const HANDLE = /^v1\.([A-Za-z0-9_-]{22})\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{0,342})\.([A-Za-z0-9_-]{43})$/;
const MAX_DATA = 256;

/** Who a verified token speaks for: its issuer, subject and client; undefined without a subject. */
function principal(auth: McpAuthInfo | undefined): string | undefined {
  const sub = auth?.extra?.sub;
  if (typeof sub !== 'string' || !sub) return undefined;
  const iss = typeof auth?.extra?.iss === 'string' ? auth.extra.iss : '';
  return JSON.stringify([iss, sub, auth?.clientId ?? '']);
}

/**
 * Creates the binding.
 *
 * @throws TypeError when the secret is shorter than 32 bytes or the lifetime is not a positive integer.
 */
export function createStateBinding(options: StateBindingOptions): StateBinding {
  const secret = typeof options.secret === 'string' ? Buffer.from(options.secret, 'utf8') : Buffer.from(options.secret);
  if (secret.length < 32) throw new TypeError('createStateBinding: secret must be at least 32 bytes');
  const ttl = options.ttlSeconds ?? DEFAULTS.stateBinding.ttlSeconds;
  if (!Number.isSafeInteger(ttl) || ttl < 1) throw new TypeError('createStateBinding: ttlSeconds must be a positive integer');
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const current = new AsyncLocalStorage<McpAuthInfo | undefined>();
  const mac = (who: string, nonce: string, expiry: string, data: string) =>
    createHmac('sha256', secret).update(`mcp-state\u0000${who}\u0000${nonce}\u0000${expiry}\u0000${data}`).digest();

  function mint(auth: McpAuthInfo | undefined, data = ''): string {
    const who = principal(auth);
    if (!who) throw new TypeError('a state handle needs a verified caller (auth with a subject)');
    if (data.length > MAX_DATA) throw new TypeError(`a state handle carries at most ${MAX_DATA} characters of data`);
    const nonce = randomBytes(16).toString('base64url');
    const expiry = (now() + ttl).toString(36);
    const encoded = Buffer.from(data, 'utf8').toString('base64url');
    return `${VERSION}.${nonce}.${expiry}.${encoded}.${mac(who, nonce, expiry, encoded).toString('base64url')}`;
  }

  function open(auth: McpAuthInfo | undefined, handle: unknown): string | undefined {
    const who = principal(auth);
    const parts = typeof handle === 'string' ? HANDLE.exec(handle) : null;
    if (!who || !parts) return undefined;
    const [, nonce, expiry, encoded, tag] = parts as unknown as [string, string, string, string, string];
    if (Number.parseInt(expiry, 36) <= now()) return undefined;
    // one spelling per handle: base64url's unused low bits must be zero, or a re-spelt handle would pass
    if (!isCanonicalBase64url(tag)) return undefined;
    const expected = mac(who, nonce, expiry, encoded);
    const given = Buffer.from(tag, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return Buffer.from(encoded, 'base64url').toString('utf8');
  }

  const owns = (auth: McpAuthInfo | undefined, handle: unknown): boolean => open(auth, handle) !== undefined;

  function sessions(req: Request, res: Response, next: NextFunction): void {
    const presented = req.headers['mcp-session-id'];
    if (presented !== undefined && !owns(req.auth, presented)) {
      res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      return;
    }
    current.run(req.auth, next);
  }

  function sessionIdGenerator(): string {
    return mint(current.getStore());
  }

  return { mint, owns, open, sessions, sessionIdGenerator };
}
