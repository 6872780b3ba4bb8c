/** Cancel (login) and Deny (consent): the authorization ends with `access_denied`. */
import type { Request, Response } from 'express';
import { audit } from '../ops/audit.js';
import type { Details, InteractionContext } from './context.js';

export async function abortInteraction(ctx: InteractionContext, req: Request, res: Response, details: Details): Promise<void> {
  if (details.prompt.name === 'consent') {
    audit(ctx.o.logger, 'consent.denied', { client_id: String(details.params.client_id), account_id: details.session?.accountId });
  }
  // RFC 6749 §4.1.2.1 access_denied, delivered with `iss` (RFC 9207) by oidc-provider.
  await ctx.finish(req, res, { error: 'access_denied', error_description: 'The user denied the request' }, false);
}
