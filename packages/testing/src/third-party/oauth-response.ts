/** JSON answers of the provider's back-channel endpoints (RFC 6749 §5.1 and §5.2). */
import type { Response } from 'express';

/** Token responses and errors are never cached (§5.1). */
export function sendJson(res: Response, status: number, body: unknown): void {
  res.status(status).set({ 'cache-control': 'no-store', pragma: 'no-cache' }).json(body);
}

export function sendOAuthError(res: Response, status: number, error: string, description: string): void {
  sendJson(res, status, { error, error_description: description });
}
