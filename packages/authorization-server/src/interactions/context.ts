/**
 * What every interaction handler shares: the options, the interaction's form URL, the error
 * page, handing the result back to oidc-provider, the client as shown on the pages, and the
 * middleware that loads the interaction.
 */
import type { NextFunction, Request, Response } from 'express';
import type Provider from 'oidc-provider';
import type { Store } from '../storage/types.js';
import type { Logger } from '../ops/logger.js';
import type { ResourceRegistry } from '../tokens/resources.js';
import { isCimdClientId } from '../clients/client-policy.js';
import { shownClientName } from '../accounts/account-name.js';
import { allLoopback, parseUrl } from '../http/urls.js';
import type { ResolvedConfig } from '../config/types.js';
import type { UpstreamLogin } from '../upstream/login.js';
import { errorPage } from './pages.js';
import type { LoginThrottleLimits } from './throttle.js';
import type { ScopeText } from './scope-text.js';

export interface InteractionOptions {
  provider: Provider;
  store: Store;
  resources: ResourceRegistry;
  /** Resource display names and scope descriptions on the pages. */
  scopeText: ScopeText;
  logger: Logger;
  mountPath: string;
  secureCookies: boolean;
  serviceName: string;
  /** Client IDs from the configuration: their names are operator-verified. */
  staticClientIds: Set<string>;
  /** Dev only: account id logged in without a page. */
  devAutoLoginAccountId?: string;
  /** The operator console's path (`console.path`), when it is on: its sign-in ends there. */
  consolePath?: string;
  /** The issuer (builds the upstream callback URL). */
  issuer?: string;
  /** Upstream OpenID Connect providers offered on the login page. */
  upstream: ResolvedConfig['upstream'];
  loginLimits: LoginThrottleLimits;
  /** A production server: the demo account never signs in (account-origin.ts `signInRefusal`). */
  production?: boolean;
}

export type Details = Awaited<ReturnType<Provider['interactionDetails']>>;
export type Grant = InstanceType<Provider['Grant']>;
export type InteractionResult = Parameters<Provider['interactionResult']>[2];

export interface InteractionContext {
  o: InteractionOptions;
  provider: Provider;
  /** `<mount>/interaction` */
  base: string;
  stylesheet: string;
  /** The form URL of an interaction. */
  action(uid: string): string;
  fail(res: Response, status: number, message: string, retry?: string): void;
  /** Hands the result to oidc-provider and sends the browser back to it. */
  finish(req: Request, res: Response, result: InteractionResult, merge: boolean): Promise<void>;
  describeClient(details: Details): Promise<ClientView>;
}

export interface ClientView {
  clientId: string;
  clientName: string;
  unverified: boolean;
  cimdHost?: string;
  redirectHost: string;
  redirectUri: string;
  loopbackOnly: boolean;
}

function origin(uri: string): string | undefined {
  const url = parseUrl(uri);
  if (!url) return undefined;
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}

export function createInteractionContext(o: InteractionOptions): InteractionContext {
  const { provider } = o;
  const base = `${o.mountPath}/interaction`;
  const stylesheet = `${base}/assets/style.css`;
  return {
    o,
    provider,
    base,
    stylesheet,
    action: (uid) => `${base}/${encodeURIComponent(uid)}`,
    fail(res, status, message, retry) {
      res
        .status(status)
        .type('html')
        .send(errorPage(message, stylesheet, retry));
    },
    async finish(req, res, result, merge) {
      const target = await provider.interactionResult(req, res, result, { mergeWithLastSubmission: merge });
      res.redirect(303, target);
    },
    async describeClient(details) {
      const clientId = String(details.params.client_id);
      const client = await provider.Client.find(clientId);
      const redirectUri = String(details.params.redirect_uri ?? client?.redirectUris?.[0] ?? '');
      const redirectUrl = parseUrl(redirectUri);
      const cimd = isCimdClientId(clientId);
      return {
        clientId,
        clientName: shownClientName(client?.clientName, clientId),
        unverified: !o.staticClientIds.has(clientId),
        cimdHost: cimd ? parseUrl(clientId)?.host : undefined,
        redirectHost: redirectUrl ? redirectUrl.host || redirectUrl.protocol : redirectUri,
        redirectUri,
        loopbackOnly: allLoopback(client?.redirectUris ?? []),
      };
    },
  };
}

/** Loads the interaction first, so the CSP's form-action can name the client's redirect origin. */
export function loadInteraction(ctx: InteractionContext, upstream: UpstreamLogin | undefined) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const details = await ctx.provider.interactionDetails(req, res);
      if (details.uid !== req.params.uid) throw new Error('interaction uid mismatch');
      res.locals.details = details;
      const redirect = typeof details.params.redirect_uri === 'string' ? origin(details.params.redirect_uri) : undefined;
      res.locals.formTargets = [
        ...(redirect ? [redirect] : []),
        ...(details.prompt.name === 'login' && upstream ? upstream.formOrigins() : []),
      ];
      next();
    } catch (err) {
      ctx.o.logger.warn('interaction not found or expired', { reason: (err as Error).name });
      ctx.fail(res, 400, 'This sign-in request has expired or is invalid.');
    }
  };
}
