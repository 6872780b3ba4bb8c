/**
 * `<issuer>/account`: the signed-in user's connected apps (remembered grants: what each may do,
 * when it was last used), each revocable; their third-party connections (the token vault), each
 * disconnectable; and their recent sign-ins (account-activity.ts). The user is the one of
 * oidc-provider's browser session (the `_session` cookie set by the login page, signed-in.ts);
 * without one the page asks to sign in through an application first.
 */
import express, { type Request, type Response, type Router, type NextFunction } from 'express';
import { pageSecurityHeaders } from './security-headers.js';
import { audit } from '../ops/audit.js';
import { shownAccountName, shownClientName } from '../accounts/account-name.js';
import { escapeHtml, page } from '../http/html.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { type RememberedGrant, RememberedGrants } from './remembered-grants.js';
import { errorPage } from './pages.js';
import { scopeItem } from './consent-page.js';
import type { InteractionOptions } from './context.js';
import { signedIn } from './signed-in.js';
import type { ThirdParty } from '../third-party/service.js';
import { connectionsSection } from '../third-party/account-section.js';
import { lastUse, shownTime, signInHistory } from './account-activity.js';

/** What the account page shares with the interaction pages (one definition: context.ts). */
export type AccountPageOptions = Pick<
  InteractionOptions,
  'provider' | 'store' | 'resources' | 'scopeText' | 'logger' | 'mountPath' | 'secureCookies' | 'serviceName' | 'production'
> & {
  /** Third-party authorization, when configured: the connections section. */
  thirdParty?: ThirdParty;
};

/** What the account page's routes share. */
interface AccountPage {
  o: AccountPageOptions;
  grants: RememberedGrants;
  path: string;
  stylesheet: string;
}

export function createAccountRouter(o: AccountPageOptions): Router {
  const router = express.Router();
  const c: AccountPage = {
    o,
    grants: new RememberedGrants(o.provider, o.store),
    path: `${o.mountPath}/account`,
    stylesheet: `${o.mountPath}/interaction/assets/style.css`,
  };

  router.use(pageSecurityHeaders(false));
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  router.use(express.urlencoded({ extended: false, limit: '4kb' }));

  router.get('/', async (req, res, next) => {
    try {
      const user = await account(c, req, res);
      if (!user) {
        res
          .status(401)
          .type('html')
          .send(errorPage('You are not signed in. Sign in through an application first, then come back to this page.', c.stylesheet));
        return;
      }
      const notice =
        typeof req.query.revoked === 'string'
          ? 'Access revoked.'
          : typeof req.query.disconnected === 'string'
            ? 'Account disconnected.'
            : undefined;
      await render(c, res, user.id, shownAccountName(user), notice);
    } catch (err) {
      next(err);
    }
  });

  router.post('/', async (req, res, next) => {
    try {
      await change(c, req, res);
    } catch (err) {
      next(err);
    }
  });

  router.use((err: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    // Client errors raised by express/body-parser keep their 4xx status (see the interaction router).
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    (status === 500 ? o.logger.error : o.logger.warn)('account page failed', { error: err.name, detail: err.message, status });
    if (!res.headersSent)
      res
        .status(status)
        .type('html')
        .send(errorPage(status === 500 ? 'The request could not be completed.' : 'The request is not valid.', c.stylesheet));
  });

  return router;
}

/** The account of the browser session, if any (and one that may act: account-state.ts). */
async function account({ o }: AccountPage, req: Request, res: Response) {
  return (await signedIn(o.provider, o.store, o, req, res))?.account;
}

/** One connected app: what it may do, when it was last used, and its revoke button. */
async function grantItem({ o, path }: AccountPage, accountId: string, g: RememberedGrant, csrf: string): Promise<string> {
  const client = await o.provider.Client.find(g.clientId).catch(() => undefined);
  const resources = Object.entries(g.resources)
    .map(([resource, scopes]) => {
      const name = o.scopeText.resourceName(resource);
      return `<dd>${name ? `<strong>${escapeHtml(name)}</strong><br>` : ''}<code>${escapeHtml(resource)}</code><ul>${scopes
        .map((scope) => scopeItem(o.scopeText.describe(scope, resource)))
        .join('')}</ul></dd>`;
    })
    .join('');
  const used = await lastUse(o.store, accountId, g.clientId);
  return `<li><h3>${escapeHtml(shownClientName(client?.clientName, g.clientId))}</h3>
<dl><dt>Client ID</dt><dd><code>${escapeHtml(g.clientId)}</code></dd><dt>Allowed</dt>${resources || '<dd>Basic access</dd>'}<dt>Last used</dt><dd>${escapeHtml(shownTime(used))}</dd></dl>
<form method="post" action="${escapeHtml(path)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<input type="hidden" name="client_id" value="${escapeHtml(g.clientId)}">
<button type="submit" name="action" value="revoke">Revoke access of ${escapeHtml(shownClientName(client?.clientName, g.clientId))}</button>
</form></li>`;
}

async function render(c: AccountPage, res: Response, accountId: string, name: string, notice?: string) {
  const { o, path } = c;
  const list = await c.grants.list(accountId);
  const csrf = issueCsrfToken(res, path, o.secureCookies);
  const items = await Promise.all(list.map((g) => grantItem(c, accountId, g, csrf)));
  const clientName = async (clientId: string) =>
    shownClientName((await o.provider.Client.find(clientId).catch(() => undefined))?.clientName, clientId);
  res.type('html').send(
    page(
      `Connected apps — ${o.serviceName}`,
      `<h1>Connected apps</h1>
<p>Signed in to <strong>${escapeHtml(o.serviceName)}</strong> as <strong>${escapeHtml(name)}</strong>.</p>
${notice ? `<p class="warn" role="status">${escapeHtml(notice)}</p>` : ''}
${items.length ? `<ul class="grants">${items.join('\n')}</ul>` : '<p>No application has access to your account.</p>'}
<p class="muted">Revoking ends the application's access at once (its tokens stop working); it will have to ask you again.</p>
${o.thirdParty ? await connectionsSection(o.thirdParty, accountId, path, csrf) : ''}
${await signInHistory(o.store, accountId, clientName)}`,
      c.stylesheet,
    ),
  );
}

/** The account page's disconnect (third-party/service.ts `disconnect`); false when nothing was. */
async function disconnect({ o }: AccountPage, accountId: string, provider: unknown): Promise<boolean> {
  return (
    !!o.thirdParty && typeof provider === 'string' && !!provider && (await o.thirdParty.disconnect(accountId, provider, 'account-page'))
  );
}

/** POST: CSRF first, then the signed-in user's disconnect or revoke. */
async function change(c: AccountPage, req: Request, res: Response): Promise<void> {
  const { o, path, stylesheet } = c;
  if (!checkCsrfToken(req)) {
    res.status(403).type('html').send(errorPage('The form expired. Reload the page and try again.', stylesheet));
    return;
  }
  const user = await account(c, req, res);
  if (!user) {
    res.status(401).type('html').send(errorPage('You are not signed in.', stylesheet));
    return;
  }
  if (req.body?.action === 'disconnect') {
    if (!(await disconnect(c, user.id, req.body?.provider))) {
      res.status(400).type('html').send(errorPage('Nothing to disconnect.', stylesheet));
      return;
    }
    res.redirect(303, `${path}?disconnected=1`);
    return;
  }
  const clientId = typeof req.body?.client_id === 'string' ? req.body.client_id : '';
  if (req.body?.action !== 'revoke' || !clientId || !(await c.grants.revoke(user.id, clientId))) {
    res.status(400).type('html').send(errorPage('Nothing to revoke.', stylesheet));
    return;
  }
  audit(o.logger, 'grant.revoked', { account_id: user.id, client_id: clientId, via: 'account-page' });
  res.redirect(303, `${path}?revoked=1`);
}
