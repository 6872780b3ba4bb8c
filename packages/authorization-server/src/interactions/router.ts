/**
 * Interaction endpoints (`<mount>/interaction/:uid`): login (local accounts and upstream
 * OpenID Connect providers), consent and the dev auto-login. oidc-provider redirects the
 * browser here whenever it needs the user; we answer with `interactionResult` and send the
 * browser back to the provider.
 */
import express, { type Request, type Response, type NextFunction, type Router } from 'express';
import { pageSecurityHeaders } from './security-headers.js';
import type Provider from 'oidc-provider';
import type { Store } from '../storage/types.js';
import type { Logger } from '../logger.js';
import type { ResourceRegistry } from '../resources.js';
import { audit } from '../audit.js';
import { PAGE_STYLE } from '../html.js';
import { verifyPassword, dummyHash } from '../passwords.js';
import { isCimdClientId } from '../client-policy.js';
import { allLoopback, parseUrl } from '../urls.js';
import type { UpstreamProviderConfig } from '../upstream/config.js';
import { UpstreamLogin } from '../upstream/login.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { readCookie } from './cookies.js';
import { grantRequestedAccess, isEmpty, missingAccess, notCoveredBy } from './grant.js';
import { consentPage, errorPage, loginPage } from './pages.js';
import { RememberedGrants } from './remembered-grants.js';
import { DEFAULT_LOGIN_LIMITS, LoginThrottle, type LoginThrottleLimits } from './throttle.js';

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
  /** The issuer (builds the upstream callback URL). */
  issuer?: string;
  /** Upstream OpenID Connect providers offered on the login page. */
  upstream?: readonly UpstreamProviderConfig[];
  loginLimits?: LoginThrottleLimits;
}

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;
type Grant = InstanceType<Provider['Grant']>;

const UPSTREAM_COOKIE = 'mcp_upstream';
const UPSTREAM_DONE = 'upstream-done';

function origin(uri: string): string | undefined {
  const url = parseUrl(uri);
  if (!url) return undefined;
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}

export function createInteractionRouter(o: InteractionOptions): Router {
  const router = express.Router();
  const { provider } = o;
  const base = `${o.mountPath}/interaction`;
  const stylesheet = `${base}/assets/style.css`;
  const limits = { ...DEFAULT_LOGIN_LIMITS, ...o.loginLimits };
  const throttle = new LoginThrottle(o.store.kv, limits);
  const grants = new RememberedGrants(provider, o.store);
  const upstreamProviders = o.upstream ?? [];
  const upstream = upstreamProviders.length
    ? new UpstreamLogin(upstreamProviders, { store: o.store, logger: o.logger, redirectUri: `${o.issuer}/interaction/upstream/callback` })
    : undefined;
  // Discovery ahead of the first click, so the login page's CSP can name the providers'
  // authorization endpoints even when they are not on the issuer's origin.
  upstream?.warm();

  // The only static asset: lets the CSP forbid inline styles (`style-src 'self'`).
  router.get('/assets/style.css', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600');
    res.type('text/css').send(PAGE_STYLE);
  });

  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    res.set('Pragma', 'no-cache');
    next();
  });
  const pageSecurity = pageSecurityHeaders(true);
  router.use(pageSecurityHeaders(false));
  router.use(express.urlencoded({ extended: false, limit: '8kb' }));

  const action = (uid: string) => `${base}/${encodeURIComponent(uid)}`;
  const fail = (res: Response, status: number, message: string, retry?: string): void => {
    res
      .status(status)
      .type('html')
      .send(errorPage(message, stylesheet, retry));
  };

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
      redirectHost: redirectUrl ? redirectUrl.host || redirectUrl.protocol : redirectUri,
      redirectUri,
      loopbackOnly: allLoopback(client?.redirectUris ?? []),
    };
  }

  /**
   * The grant this consent builds on: the session's live grant, else the one remembered for
   * this account and client from an earlier session (revoked or expired ones are gone).
   */
  async function baseGrant(details: Details): Promise<{ grant?: Grant; remembered?: Grant }> {
    const accountId = String(details.session?.accountId);
    const clientId = String(details.params.client_id);
    const session = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    if (session && session.accountId === accountId && session.clientId === clientId) return { grant: session };
    const remembered = await grants.find(accountId, clientId);
    return { grant: remembered, remembered };
  }

  async function approve(req: Request, res: Response, details: Details, remembered: Grant | undefined, how: 'page' | 'remembered' | 'dev') {
    const accountId = String(details.session?.accountId);
    const clientId = String(details.params.client_id);
    const missing = missingAccess(details);
    const { result, grantId } = await grantRequestedAccess(provider, details, remembered);
    await grants.remember(accountId, clientId, grantId);
    audit(o.logger, 'consent.granted', {
      client_id: clientId,
      account_id: accountId,
      resources: Object.keys(missing.missingResourceScopes ?? {}),
      scopes: Object.values(missing.missingResourceScopes ?? {}).flat(),
      via: how,
    });
    await finish(req, res, result, true);
  }

  async function renderConsent(req: Request, res: Response, details: Details) {
    const { grant, remembered } = await baseGrant(details);
    const left = notCoveredBy(missingAccess(details), remembered);
    // Everything asked for was approved in an earlier session and not revoked: no page —
    // except for native (loopback / custom-scheme) clients, which any local program can
    // impersonate (MCP security §Localhost Redirect URI Risks; oidc-provider's
    // native_client_prompt), and when the client asked for prompt=consent.
    const mustAsk = details.prompt.reasons.some((r) => r === 'native_client_prompt' || r === 'consent_prompt');
    if (remembered && isEmpty(left) && !mustAsk) return approve(req, res, details, remembered, 'remembered');
    const reconfirm = isEmpty(left);
    const account = await o.store.accounts.findById(String(details.session?.accountId));
    const client = await describeClient(details);
    const csrf = issueCsrfToken(res, action(details.uid), o.secureCookies);
    res.type('html').send(
      consentPage({
        serviceName: o.serviceName,
        action: action(details.uid),
        csrf,
        stylesheet,
        ...client,
        account: account?.displayName ?? account?.username ?? 'your account',
        reconfirm,
        resources: reconfirm
          ? alreadyRequested(details, grant)
          : Object.entries(left.missingResourceScopes ?? {}).map(([resource, scopes]) => ({
              resource,
              scopes: scopes.map((scope) => ({ scope, description: o.resources.describe(scope) ?? scope })),
              alreadyGranted: grant ? grant.getResourceScope(resource).split(' ').filter(Boolean) : [],
            })),
        oidcScopes: (left.missingOIDCScope ?? []).filter((s) => s !== 'openid'),
      }),
    );
  }

  /** Nothing new is asked: the requested resources and scopes, all granted before. */
  function alreadyRequested(details: Details, grant: Grant | undefined) {
    const asked = new Set(String(details.params.scope ?? '').split(' '));
    const param = details.params.resource;
    const list = typeof param === 'string' ? [param] : Array.isArray(param) ? param.map(String) : Object.keys(grant?.resources ?? {});
    return list.map((resource) => {
      const granted = grant
        ? grant
            .getResourceScope(resource)
            .split(' ')
            .filter((s) => asked.has(s))
        : [];
      return {
        resource,
        scopes: granted.map((scope) => ({ scope, description: o.resources.describe(scope) ?? scope })),
        alreadyGranted: [],
      };
    });
  }

  async function renderLogin(res: Response, details: Details, error?: string, username?: string, status?: number) {
    const client = await describeClient(details);
    const csrf = issueCsrfToken(res, action(details.uid), o.secureCookies);
    res
      .status(status ?? (error ? 401 : 200))
      .type('html')
      .send(
        loginPage({
          serviceName: o.serviceName,
          action: action(details.uid),
          csrf,
          stylesheet,
          clientName: client.clientName,
          unverified: client.unverified,
          error,
          username,
          upstream: upstreamProviders.map((p) => p.name),
        }),
      );
  }

  // Load the interaction first so the CSP's form-action can name the client's redirect origin.
  const load = async (req: Request, res: Response, next: NextFunction) => {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.uid !== req.params.uid) throw new Error('interaction uid mismatch');
      res.locals.details = details;
      const redirect = typeof details.params.redirect_uri === 'string' ? origin(details.params.redirect_uri) : undefined;
      res.locals.formTargets = [
        ...(redirect ? [redirect] : []),
        ...(details.prompt.name === 'login' && upstream ? upstream.formOrigins() : []),
      ];
      next();
    } catch (err) {
      o.logger.warn('interaction not found or expired', { reason: (err as Error).name });
      fail(res, 400, 'This sign-in request has expired or is invalid.');
    }
  };

  // The upstream provider sends the browser back here (one fixed redirect URI for every
  // interaction); the flow cookie binds the response to this browser, `state` to the flow.
  router.get('/upstream/callback', async (req, res, next) => {
    if (!upstream) return fail(res, 404, 'Not found.');
    try {
      const query = new URL(req.originalUrl, 'http://x').search;
      const handle = readCookie(req, UPSTREAM_COOKIE);
      res.clearCookie(UPSTREAM_COOKIE, { path: `${base}/upstream`, httpOnly: true, secure: o.secureCookies, sameSite: 'lax' });
      const result = await upstream.complete(handle, query);
      if (!result.ok) {
        audit(o.logger, 'login.failed', {
          method: 'upstream',
          provider: result.provider,
          reason: result.reason,
          detail: result.detail,
          ip: req.ip,
        });
        const retry = result.uid ? action(result.uid) : undefined;
        if (result.reason === 'no-account') {
          return fail(
            res,
            403,
            `Your ${result.provider} account is not linked to an account here, and new accounts cannot be created this way. Ask the administrator to create or link your account.`,
            retry,
          );
        }
        if (result.reason === 'disabled') return fail(res, 403, 'This account is disabled.', retry);
        if (result.reason === 'unknown-flow')
          return fail(res, 400, 'This sign-in attempt has expired or was started in another browser. Start again from the application.');
        if (result.detail === 'access_denied') return fail(res, 401, `Sign-in with ${result.provider} was cancelled.`, retry);
        return fail(res, 502, `Sign-in with ${result.provider} did not complete. Try again.`, retry);
      }
      await o.store.kv.set(
        UPSTREAM_DONE,
        result.uid,
        { accountId: result.account.id, provider: result.provider, created: result.created },
        120,
      );
      res.redirect(303, `${action(result.uid)}/upstream`);
    } catch (err) {
      next(err);
    }
  });

  // Back on the interaction's own path, where oidc-provider's interaction cookie is sent.
  router.get('/:uid/upstream', load, pageSecurity, async (req, res, next) => {
    try {
      const details = res.locals.details as Details;
      const done = await o.store.kv.get<{ accountId: string; provider: string; created: boolean }>(UPSTREAM_DONE, details.uid);
      if (!done || details.prompt.name !== 'login') return fail(res, 400, 'This sign-in request has expired or is invalid.');
      await o.store.kv.delete(UPSTREAM_DONE, details.uid);
      audit(o.logger, 'login.upstream', { provider: done.provider, account_id: done.accountId, created: done.created, ip: req.ip });
      if (done.created) audit(o.logger, 'account.created', { account_id: done.accountId, provider: done.provider });
      await finish(req, res, { login: { accountId: done.accountId } }, false);
    } catch (err) {
      next(err);
    }
  });

  router.get('/:uid', load, pageSecurity, async (req, res, next) => {
    try {
      const details = res.locals.details as Details;
      if (o.devAutoLoginAccountId) {
        if (details.prompt.name === 'login') {
          await finish(req, res, { login: { accountId: o.devAutoLoginAccountId } }, false);
        } else {
          await approve(req, res, details, (await baseGrant(details)).remembered, 'dev');
        }
        return;
      }
      if (details.prompt.name === 'login') return await renderLogin(res, details);
      if (details.prompt.name === 'consent') return await renderConsent(req, res, details);
      fail(res, 400, 'Unsupported interaction.');
    } catch (err) {
      next(err);
    }
  });

  async function passwordLogin(req: Request, res: Response, details: Details) {
    const username = typeof req.body?.username === 'string' ? req.body.username.trim().slice(0, 200) : '';
    const password = typeof req.body?.password === 'string' ? req.body.password : '';
    const address = req.ip ?? 'unknown';
    // Counted before the password is checked (see throttle.ts): parallel guesses cannot all pass.
    const brake = await throttle.attempt(address, username);
    if (brake) {
      audit(o.logger, 'login.throttled', { username, ip: address, limit: brake });
      // The counters expire at most one window after the first attempt they counted.
      res.set('Retry-After', String(limits.windowSeconds));
      await renderLogin(res, details, 'Too many failed attempts. Try again later.', username, 429);
      return;
    }
    const account = username ? await o.store.accounts.findByUsername(username) : undefined;
    // Unknown users cost one scrypt too, so timing does not reveal which usernames exist.
    const ok = await verifyPassword(password, account?.passwordHash ?? (await dummyHash()));
    if (!account || !ok || account.disabled) {
      audit(o.logger, 'login.failed', {
        method: 'password',
        username,
        ip: address,
        reason: !account ? 'unknown-user' : !ok ? 'wrong-password' : 'disabled',
        client_id: String(details.params.client_id),
      });
      // The password was right: saying the account is disabled reveals nothing to its owner.
      if (account && ok) await renderLogin(res, details, 'This account is disabled.', username, 403);
      else await renderLogin(res, details, 'Invalid username or password.', username);
      return;
    }
    await throttle.succeeded(address, username);
    audit(o.logger, 'login.succeeded', {
      method: 'password',
      account_id: account.id,
      ip: address,
      client_id: String(details.params.client_id),
    });
    await finish(req, res, { login: { accountId: account.id } }, false);
  }

  router.post('/:uid', load, pageSecurity, async (req, res, next) => {
    try {
      const details = res.locals.details as Details;
      if (!checkCsrfToken(req)) {
        o.logger.warn('interaction form refused: bad CSRF token', { prompt: details.prompt.name });
        fail(res, 403, 'The form expired. Go back and try again.');
        return;
      }
      const choice = req.body?.action;
      if (choice === 'abort' || choice === 'deny') {
        if (details.prompt.name === 'consent') {
          audit(o.logger, 'consent.denied', { client_id: String(details.params.client_id), account_id: details.session?.accountId });
        }
        // RFC 6749 §4.1.2.1 access_denied, delivered with `iss` (RFC 9207) by oidc-provider.
        await finish(req, res, { error: 'access_denied', error_description: 'The user denied the request' }, false);
        return;
      }
      if (details.prompt.name === 'login' && typeof req.body?.upstream === 'string') {
        const index = Number(req.body.upstream);
        if (!upstream || !Number.isInteger(index) || !upstreamProviders[index])
          return fail(res, 400, 'Unknown sign-in provider.', action(details.uid));
        let started: { url: string; handle: string };
        try {
          started = await upstream.start(index, details.uid);
        } catch (err) {
          o.logger.warn('upstream provider unavailable', { provider: upstreamProviders[index]!.name, reason: (err as Error).message });
          return fail(res, 502, `${upstreamProviders[index]!.name} is not reachable right now. Try again later.`, action(details.uid));
        }
        // Lax: the provider brings the browser back with a top-level GET from another site.
        res.cookie(UPSTREAM_COOKIE, started.handle, {
          path: `${base}/upstream`,
          httpOnly: true,
          secure: o.secureCookies,
          sameSite: 'lax',
          maxAge: 600_000,
        });
        res.redirect(303, started.url);
        return;
      }
      if (details.prompt.name === 'login') return await passwordLogin(req, res, details);
      if (details.prompt.name === 'consent' && choice === 'approve') {
        await approve(req, res, details, (await baseGrant(details)).remembered, 'page');
        return;
      }
      fail(res, 400, 'Unsupported action.');
    } catch (err) {
      next(err);
    }
  });

  router.use((err: Error & { status?: number; expose?: boolean }, _req: Request, res: Response, _next: NextFunction) => {
    // Client errors raised by express/body-parser (bad percent-encoding, oversized forms)
    // keep their 4xx status; only our own failures are a 500.
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    (status === 500 ? o.logger.error : o.logger.warn)('interaction failed', { error: err.name, detail: err.message, status });
    if (!res.headersSent)
      fail(
        res,
        status,
        status === 413 ? 'The form is too large.' : status === 500 ? 'The request could not be completed.' : 'The request is not valid.',
      );
  });

  return router;
}
