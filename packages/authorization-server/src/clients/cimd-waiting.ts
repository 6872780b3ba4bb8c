/**
 * The page a user sees when the client they came with waits for an operator's approval (issue
 * 44): a CIMD client from a host the stored policy does not trust yet. Not an error: it says who
 * must act and offers to try again (a plain link: no script needed). Only for a client whose
 * document was fetched and is valid; anything else goes on to oidc-provider, which answers as
 * before (a denied or unknown client is `invalid_client`).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { audit } from '../ops/audit.js';
import type { CimdTrust } from './cimd-trust-gate.js';
import type { ClientGate } from './client-gate.js';
import { isCimdClientId } from './client-policy.js';
import { escapeHtml, page } from '../http/html.js';
import { pageSecurityHeaders } from '../interactions/security-headers.js';
import type { Logger } from '../ops/logger.js';

export interface WaitingPageOptions {
  trust: CimdTrust;
  gate: ClientGate;
  serviceName: string;
  stylesheet: string;
  logger: Logger;
}

/** HTTP 202 Accepted: the request is understood and held, not refused. */
export const WAITING_STATUS = 202;

function waitingPage(o: WaitingPageOptions, clientName: string | undefined, host: string, retry: string): string {
  const who = clientName ? `<strong>${escapeHtml(clientName)}</strong> <em class="badge">unverified</em>` : 'This application';
  return page(
    `Waiting for approval — ${o.serviceName}`,
    `<h1>Waiting for approval</h1>
<p role="status">${who} (from <strong>${escapeHtml(host)}</strong>) is new to ${escapeHtml(o.serviceName)}. An administrator must approve it before you can sign in with it.</p>
<p>Nothing is wrong on your side. Ask your administrator to approve it, then try again.</p>
<p><a href="${escapeHtml(retry)}">Try again</a></p>`,
    o.stylesheet,
  );
}

export function cimdWaitingMiddleware(o: WaitingPageOptions): RequestHandler[] {
  const headers = pageSecurityHeaders(false);
  const handler = async (req: Request, res: Response, next: NextFunction) => {
    const clientId = typeof req.query.client_id === 'string' ? req.query.client_id : undefined;
    if (!clientId || !isCimdClientId(clientId)) return next();
    try {
      if ((await o.trust.verdict(clientId)) !== 'pending') return next();
      // Only a document that was fetched and is valid enters the queue (the gate records it).
      const client = (await o.gate.findUngated(clientId)) as { clientName?: string } | undefined;
      if (!client) return next();
      if (await o.trust.sighted(clientId)) audit(o.logger, 'cimd.client_waiting', { client_id: clientId, via: 'cimd' });
      const host = new URL(clientId).hostname;
      res.status(WAITING_STATUS).set('cache-control', 'no-store').type('html');
      headers(req, res, () => res.send(waitingPage(o, client.clientName, host, req.originalUrl)));
    } catch {
      // oidc-provider answers a document it cannot fetch or accept as before
      next();
    }
  };
  return [handler];
}
