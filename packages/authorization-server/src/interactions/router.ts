/**
 * Interaction endpoints (`<mount>/interaction/:uid`): login, consent and the dev auto-login.
 * oidc-provider redirects the browser here whenever it needs the user; we answer with
 * `interactionResult` and send the browser back to the provider.
 */
import express, { type Request, type Response, type NextFunction, type Router } from 'express';
import helmet from 'helmet';
import type Provider from 'oidc-provider';
import type { Store } from '../storage/types.js';
import type { Logger } from '../logger.js';
import type { ResourceRegistry } from '../resources.js';
import { verifyPassword, dummyHash } from '../passwords.js';
import { isCimdClientId } from '../client-policy.js';
import { allLoopback, parseUrl } from '../urls.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { grantRequestedAccess } from './grant.js';
import { consentPage, errorPage, loginPage } from './pages.js';

export interface InteractionOptions {
  provider: Provider;
  store: Store;
  resources: ResourceRegistry;
  logger: Logger;
  mountPath: string;
  secureCookies: boolean;
  serviceName: string;
  /** Client IDs from the configuration: their names are operator-verified. */
  staticClientIds: Set<string>;
  /** Dev only: account id logged in without a page. */
  devAutoLoginAccountId?: string;
}

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

const LOGIN_FAILURES = 'login-failures';
const MAX_LOGIN_FAILURES = 10;
const LOGIN_FAILURE_WINDOW = 15 * 60;

/** Where the browser may go after a form post: this server and the client's redirect URI. */
function formTargets(details: Details | undefined): string[] {
  const targets = ["'self'"];
  const uri = details?.params?.redirect_uri;
  const url = typeof uri === 'string' ? parseUrl(uri) : undefined;
  if (url) targets.push(url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol);
  return targets;
}

export function createInteractionRouter(o: InteractionOptions): Router {
  const router = express.Router();
  const { provider } = o;

  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    res.set('Pragma', 'no-cache');
    next();
  });
  const securityHeaders = (withFormTargets: boolean) =>
    helmet({
      contentSecurityPolicy: {
        useDefaults: true,
        directives: {
          defaultSrc: ["'none'"],
          styleSrc: ["'unsafe-inline'"],
          imgSrc: ["'self'"],
          scriptSrc: ["'none'"],
          // A form post ends in a redirect to the client; browsers apply form-action to it.
          formAction: withFormTargets
            ? ["'self'", (_req, res) => ((res as Response).locals.formTargets as string[] | undefined)?.slice(1).join(' ') ?? '']
            : ["'self'"],
          frameAncestors: ["'none'"],
          upgradeInsecureRequests: null,
        },
      },
      referrerPolicy: { policy: 'no-referrer' },
    });
  const pageSecurity = securityHeaders(true);
  router.use(securityHeaders(false));
  router.use(express.urlencoded({ extended: false, limit: '8kb' }));

  const action = (uid: string) => `${o.mountPath}/interaction/${encodeURIComponent(uid)}`;

  async function finish(req: Request, res: Response, result: Parameters<Provider['interactionResult']>[2], merge: boolean) {
    const target = await provider.interactionResult(req, res, result, { mergeWithLastSubmission: merge });
    res.redirect(303, target);
  }

  async function describeClient(details: Details) {
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId);
    const redirectUri = String(details.params.redirect_uri ?? client?.redirectUris?.[0] ?? '');
    const redirectUrl = parseUrl(redirectUri);
    const cimd = isCimdClientId(clientId);
    return {
      clientId,
      clientName: client?.clientName ?? clientId,
      unverified: !o.staticClientIds.has(clientId),
      cimdHost: cimd ? parseUrl(clientId)?.host : undefined,
      redirectHost: redirectUrl ? (redirectUrl.host || redirectUrl.protocol) : redirectUri,
      loopbackOnly: allLoopback(client?.redirectUris ?? []),
    };
  }

  async function renderConsent(res: Response, details: Details) {
    const account = await o.store.accounts.findById(String(details.session?.accountId));
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    const requestedResources = Object.entries(missing.missingResourceScopes ?? {});
    const client = await describeClient(details);
    const csrf = issueCsrfToken(res, action(details.uid), o.secureCookies);
    res.type('html').send(
      consentPage({
        serviceName: o.serviceName,
        action: action(details.uid),
        csrf,
        ...client,
        account: account?.displayName ?? account?.username ?? 'your account',
        resources: requestedResources.map(([resource, scopes]) => ({
          resource,
          scopes: scopes.map((scope) => ({ scope, description: o.resources.describe(scope) ?? scope })),
        })),
        oidcScopes: (missing.missingOIDCScope ?? []).filter((s) => s !== 'openid'),
      }),
    );
  }

  async function renderLogin(res: Response, details: Details, error?: string, username?: string, status?: number) {
    const client = await describeClient(details);
    const csrf = issueCsrfToken(res, action(details.uid), o.secureCookies);
    res.status(status ?? (error ? 401 : 200)).type('html').send(
      loginPage({ serviceName: o.serviceName, action: action(details.uid), csrf, clientName: client.clientName, error, username }),
    );
  }

  // Load the interaction first so the CSP's form-action can name the client's redirect origin.
  const load = async (req: Request, res: Response, next: NextFunction) => {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.uid !== req.params.uid) throw new Error('interaction uid mismatch');
      res.locals.details = details;
      res.locals.formTargets = formTargets(details);
      next();
    } catch (err) {
      o.logger.warn('interaction not found or expired', { reason: (err as Error).name });
      res.status(400).type('html').send(errorPage('This sign-in request has expired or is invalid.'));
    }
  };

  router.get('/:uid', load, pageSecurity, async (req, res, next) => {
    try {
      const details = res.locals.details as Details;
      if (o.devAutoLoginAccountId) {
        if (details.prompt.name === 'login') {
          await finish(req, res, { login: { accountId: o.devAutoLoginAccountId } }, false);
        } else {
          await finish(req, res, await grantRequestedAccess(provider, details), true);
        }
        return;
      }
      if (details.prompt.name === 'login') return await renderLogin(res, details);
      if (details.prompt.name === 'consent') return await renderConsent(res, details);
      res.status(400).type('html').send(errorPage('Unsupported interaction.'));
    } catch (err) {
      next(err);
    }
  });

  router.post('/:uid', load, pageSecurity, async (req, res, next) => {
    try {
      const details = res.locals.details as Details;
      if (!checkCsrfToken(req)) {
        o.logger.warn('interaction form refused: bad CSRF token', { prompt: details.prompt.name });
        res.status(403).type('html').send(errorPage('The form expired. Go back and try again.'));
        return;
      }
      const choice = req.body?.action;
      if (choice === 'abort' || choice === 'deny') {
        // RFC 6749 §4.1.2.1 access_denied, delivered with `iss` (RFC 9207) by oidc-provider.
        await finish(req, res, { error: 'access_denied', error_description: 'The user denied the request' }, false);
        return;
      }
      if (details.prompt.name === 'login') {
        const username = typeof req.body?.username === 'string' ? req.body.username.trim() : '';
        const password = typeof req.body?.password === 'string' ? req.body.password : '';
        // Brute-force brake per (address, username); a later issue adds account lockout.
        const attemptKey = `${req.ip ?? 'unknown'}|${username.toLowerCase()}`;
        const failures = (await o.store.kv.get<number>(LOGIN_FAILURES, attemptKey)) ?? 0;
        if (failures >= MAX_LOGIN_FAILURES) {
          o.logger.warn('login throttled', { username });
          await renderLogin(res, details, 'Too many failed attempts. Try again later.', username, 429);
          return;
        }
        const account = username ? await o.store.accounts.findByUsername(username) : undefined;
        const ok = await verifyPassword(password, account?.passwordHash ?? (await dummyHash()));
        if (!account || !ok || account.disabled) {
          await o.store.kv.increment(LOGIN_FAILURES, attemptKey, 1, LOGIN_FAILURE_WINDOW);
          o.logger.warn('login failed', { username });
          await renderLogin(res, details, 'Invalid username or password.', username);
          return;
        }
        o.logger.info('login succeeded', { account: account.id });
        await finish(req, res, { login: { accountId: account.id } }, false);
        return;
      }
      if (details.prompt.name === 'consent' && choice === 'approve') {
        await finish(req, res, await grantRequestedAccess(provider, details), true);
        return;
      }
      res.status(400).type('html').send(errorPage('Unsupported action.'));
    } catch (err) {
      next(err);
    }
  });

  router.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
    o.logger.error('interaction failed', { error: err.name, detail: err.message });
    if (!res.headersSent) res.status(500).type('html').send(errorPage('The request could not be completed.'));
  });

  return router;
}
