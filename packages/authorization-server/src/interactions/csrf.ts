/**
 * Double-submit CSRF protection for the interaction forms: a random token in an httpOnly,
 * SameSite=Strict cookie scoped to the interaction path, echoed in a hidden form field.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { readCookie } from './cookies.js';

export const CSRF_COOKIE = 'mcp_csrf';

export function issueCsrfToken(res: Response, path: string, secure: boolean): string {
  const token = randomBytes(24).toString('base64url');
  res.cookie(CSRF_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure, path });
  return token;
}

export function checkCsrfToken(req: Request): boolean {
  const fromCookie = readCookie(req, CSRF_COOKIE);
  const fromForm = typeof req.body?.csrf === 'string' ? req.body.csrf : undefined;
  if (!fromCookie || !fromForm) return false;
  const a = Buffer.from(fromCookie);
  const b = Buffer.from(fromForm);
  return a.length === b.length && timingSafeEqual(a, b);
}
