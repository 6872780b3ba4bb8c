/**
 * The consent step: the grant it builds on (the session's, else one remembered from an earlier
 * session), the page, and approval (remembered for later sessions).
 */
import type { Request, Response } from 'express';
import { audit } from '../ops/audit.js';
import { shownAccountName } from '../accounts/account-name.js';
import type { Details, Grant, InteractionContext } from './context.js';
import { issueCsrfToken } from './csrf.js';
import { grantRequestedAccess, isEmpty, missingAccess, notCoveredBy } from './grant.js';
import { consentPage, type ConsentResource } from './consent-page.js';
import { RememberedGrants } from './remembered-grants.js';

export type ApprovedVia = 'page' | 'remembered' | 'dev';

export interface ConsentStep {
  /**
   * The grant this consent builds on: the session's live grant, else the one remembered for
   * this account and client from an earlier session (revoked or expired ones are gone).
   */
  baseGrant(details: Details): Promise<{ grant?: Grant; remembered?: Grant }>;
  approve(req: Request, res: Response, details: Details, remembered: Grant | undefined, how: ApprovedVia): Promise<void>;
  render(req: Request, res: Response, details: Details): Promise<void>;
}

export function createConsentStep(ctx: InteractionContext): ConsentStep {
  const { o, provider } = ctx;
  const grants = new RememberedGrants(provider, o.store);

  async function baseGrant(details: Details): Promise<{ grant?: Grant; remembered?: Grant }> {
    const accountId = String(details.session?.accountId);
    const clientId = String(details.params.client_id);
    const session = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    if (session && session.accountId === accountId && session.clientId === clientId) return { grant: session };
    const remembered = await grants.find(accountId, clientId);
    return { grant: remembered, remembered };
  }

  async function approve(req: Request, res: Response, details: Details, remembered: Grant | undefined, how: ApprovedVia) {
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
    await ctx.finish(req, res, result, true);
  }

  async function render(req: Request, res: Response, details: Details) {
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
    const client = await ctx.describeClient(details);
    const csrf = issueCsrfToken(res, ctx.action(details.uid), o.secureCookies);
    res.type('html').send(
      consentPage({
        serviceName: o.serviceName,
        action: ctx.action(details.uid),
        csrf,
        stylesheet: ctx.stylesheet,
        ...client,
        account: account ? shownAccountName(account) : 'your account',
        // No login in this request: the browser's earlier session was reused, maybe someone else's.
        switchAccount: !details.lastSubmission?.login,
        reconfirm,
        resources: reconfirm
          ? alreadyRequested(o.scopeText, details, grant)
          : Object.entries(left.missingResourceScopes ?? {}).map(([resource, scopes]) =>
              shown(o.scopeText, resource, scopes, grant ? grant.getResourceScope(resource).split(' ').filter(Boolean) : []),
            ),
        oidcScopes: (left.missingOIDCScope ?? []).map((scope) => o.scopeText.describe(scope)),
      }),
    );
  }

  return { baseGrant, approve, render };
}

type ScopeText = InteractionContext['o']['scopeText'];

/** Nothing new is asked: the requested resources and scopes, all granted before. */
function alreadyRequested(scopeText: ScopeText, details: Details, grant: Grant | undefined) {
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
    return shown(scopeText, resource, granted, []);
  });
}

function shown(scopeText: ScopeText, resource: string, scopes: string[], alreadyGranted: string[]): ConsentResource {
  return {
    resource,
    name: scopeText.resourceName(resource),
    scopes: scopes.map((scope) => scopeText.describe(scope, resource)),
    alreadyGranted: alreadyGranted.map((scope) => scopeText.describe(scope, resource)),
  };
}
