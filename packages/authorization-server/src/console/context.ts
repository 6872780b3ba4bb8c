/**
 * What every console section shares: the options, the operator of the request and the page
 * frame (set by the guard, router.ts), and small helpers to answer with a page, a refusal or
 * the redirect that ends a change.
 */
import type { Request, Response } from 'express';
import type Provider from 'oidc-provider';
import type { AdminService } from '../admin/service.js';
import type { Actor } from '../admin/types.js';
import type { Logger } from '../ops/logger.js';
import type { Store } from '../storage/types.js';
import { bareConsolePage, type ConsoleFrame, consolePage } from './layout.js';
import type { Operator } from '../admin/operator.js';
import { escapeHtml } from '../http/html.js';

export interface ConsoleOptions {
  provider: Provider;
  store: Store;
  admin: AdminService;
  logger: Logger;
  /** The issuer (the sign-in request goes to its authorization endpoint). */
  issuer: string;
  mountPath: string;
  /** Where the console is, under the issuer's origin (`console.path`). */
  consolePath: string;
  serviceName: string;
  production?: boolean;
  /** How old a sign-in may be for a change (seconds); older ones sign in again. */
  freshSignInSeconds: number;
  /** The configured resources (the grants filter offers them). */
  resources: string[];
}

export interface ConsoleLocals {
  operator: Operator;
  frame: ConsoleFrame;
}

export const locals = (res: Response): ConsoleLocals => res.locals.console as ConsoleLocals;

export const actor = (res: Response): Actor => ({ sub: locals(res).operator.account.id, via: 'console' });

/** Answers with a console page; `section` is its navigation entry (its path under the console). */
export function send(res: Response, section: string, title: string, body: string, status = 200): void {
  res
    .status(status)
    .type('html')
    .send(consolePage({ ...locals(res).frame, current: section }, title, body));
}

/** A page for a browser without a usable operator session (sign-in prompt, refusals). */
export function sendBare(
  res: Response,
  o: Pick<ConsoleOptions, 'serviceName'>,
  base: string,
  status: number,
  title: string,
  body: string,
): void {
  res
    .status(status)
    .type('html')
    .send(bareConsolePage(o.serviceName, base, title, body));
}

/** Ends a change: back to a page of the console, with one of that page's fixed notices. */
export function done(res: Response, path: string, notice: string): void {
  const url = new URL(`http://x${locals(res).frame.base}${path}`);
  url.searchParams.set('done', notice);
  res.redirect(303, url.pathname + url.search);
}

/** One query or form field as a trimmed, bounded string ('' when absent or not a string). */
export function field(source: Request['query'] | Record<string, unknown> | undefined, name: string, max = 500): string {
  const v = source?.[name];
  return typeof v === 'string' ? v.trim().slice(0, max) : '';
}

/** Several query fields at once, each bounded to its own length, in the order given. */
export function fields<K extends string>(source: Request['query'], limits: Record<K, number>): Record<K, string> {
  const out = {} as Record<K, string>;
  for (const name of Object.keys(limits) as K[]) out[name] = field(source, name, limits[name]);
  return out;
}

export function message(title: string, text: string): string {
  return `<h1>${escapeHtml(title)}</h1><p class="error" role="alert">${escapeHtml(text)}</p>`;
}
