/**
 * The provider's browser state: a random browser id in an httpOnly cookie, the account signed in
 * on that browser, and the pending authorization requests ("transactions") between the pages.
 * Each page's form carries the transaction id and its own CSRF token (synchronizer token
 * pattern); a post counts only from the browser that opened the transaction with the token it
 * was given. Signing in gives the browser a new id (no session fixation).
 */
import { randomBytes } from 'node:crypto';
import { parseCookie } from 'cookie';
import type { Request, Response } from 'express';
import { sameSecret } from '../client-secret.js';
import type { AuthorizationRequest } from './authorization-request.js';

export const BROWSER_COOKIE = 'tp_browser';
/** The forms' hidden fields. */
export const TRANSACTION_FIELD = 'transaction';
export const CSRF_FIELD = 'csrf';

/** RFC 6749 §10.12 asks for CSRF protection; a transaction lives as long as a user may take over the pages. */
const TRANSACTION_MS = 10 * 60 * 1000;

export interface Transaction {
  id: string;
  browser: string;
  csrf: string;
  request: AuthorizationRequest;
  expiresAt: number;
}

const random = () => randomBytes(24).toString('base64url');

export class ProviderSessions {
  /** browser id → signed-in username (absent: not signed in). */
  private readonly signedIn = new Map<string, string>();
  private readonly transactions = new Map<string, Transaction>();

  /** The request's browser id, creating one (and its cookie) when it has none. */
  browser(req: Request, res: Response): string {
    const existing = parseCookie(req.headers.cookie ?? '')[BROWSER_COOKIE];
    if (existing) return existing;
    return this.newBrowser(res);
  }

  user(browser: string): string | undefined {
    return this.signedIn.get(browser);
  }

  open(browser: string, request: AuthorizationRequest): Transaction {
    const transaction = { id: random(), browser, csrf: random(), request, expiresAt: Date.now() + TRANSACTION_MS };
    this.transactions.set(transaction.id, transaction);
    return transaction;
  }

  /** The transaction a posted form names, if this browser opened it and the CSRF token matches. */
  resume(req: Request, form: URLSearchParams): Transaction | undefined {
    const transaction = this.transactions.get(form.get(TRANSACTION_FIELD) ?? '');
    const browser = parseCookie(req.headers.cookie ?? '')[BROWSER_COOKIE];
    const csrf = form.get(CSRF_FIELD);
    if (!transaction || !browser || csrf === null || transaction.expiresAt <= Date.now()) return undefined;
    if (!sameSecret(browser, transaction.browser) || !sameSecret(csrf, transaction.csrf)) return undefined;
    return transaction;
  }

  /** Signs `username` in on a fresh browser id that the transaction moves to, with a new CSRF token. */
  signIn(res: Response, transaction: Transaction, username: string): void {
    this.signedIn.delete(transaction.browser);
    const browser = this.newBrowser(res);
    this.signedIn.set(browser, username);
    transaction.browser = browser;
    transaction.csrf = random();
  }

  /** A transaction ends with its answer (code or error): its forms cannot be posted again. */
  close(transaction: Transaction): void {
    this.transactions.delete(transaction.id);
  }

  private newBrowser(res: Response): string {
    const browser = random();
    res.cookie(BROWSER_COOKIE, browser, { httpOnly: true, sameSite: 'lax', path: '/' });
    return browser;
  }
}
