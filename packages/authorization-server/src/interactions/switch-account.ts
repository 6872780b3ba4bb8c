/**
 * "Not you? Use another account" on a consent page shown for a reused browser session: the
 * session is ended (destroyed in the store, so its cookie signs nobody in any more) and the
 * same authorization request continues at the login page. The interaction forgets the old
 * session, so oidc-provider's resume accepts the new one the login creates (it refuses an
 * interaction whose recorded session differs from the browser's).
 */
import type { Request, Response } from 'express';
import { audit } from '../ops/audit.js';
import { clientAddress } from '../http/client-address.js';
import type { Details, InteractionContext } from './context.js';

export async function switchAccount(ctx: InteractionContext, req: Request, res: Response, details: Details): Promise<void> {
  if (details.prompt.name !== 'consent') return ctx.fail(res, 400, 'Unsupported action.');
  const ended = details.session?.accountId;
  const session = details.session?.uid ? await ctx.provider.Session.findByUid(details.session.uid) : undefined;
  await session?.destroy();
  details.session = undefined;
  details.grantId = undefined;
  details.prompt = { name: 'login', reasons: ['switch_account'], details: {} };
  await details.persist();
  audit(ctx.o.logger, 'session.ended', {
    account_id: ended,
    reason: 'switch-account',
    client_id: String(details.params.client_id),
    ip: clientAddress(req),
  });
  res.redirect(303, ctx.action(details.uid));
}
