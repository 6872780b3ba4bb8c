/** Turns the consent prompt's missing scopes into a saved oidc-provider Grant. */
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;
type Grant = InstanceType<Provider['Grant']>;

export interface MissingAccess {
  missingOIDCScope?: string[];
  missingOIDCClaims?: string[];
  missingResourceScopes?: Record<string, string[]>;
}

export function missingAccess(details: Details): MissingAccess {
  return details.prompt.details as MissingAccess;
}

/** What `missing` still needs once `grant` (e.g. a grant remembered from an earlier session) is counted. */
export function notCoveredBy(missing: MissingAccess, grant: Grant | undefined): MissingAccess {
  if (!grant) return missing;
  const oidc = new Set(grant.getOIDCScope().split(' '));
  const claims = new Set(grant.getOIDCClaims());
  const resources: Record<string, string[]> = {};
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    const granted = new Set(grant.getResourceScope(resource).split(' '));
    const left = scopes.filter((s) => !granted.has(s));
    // An empty scope list for a resource still needs the resource itself in the grant.
    if (left.length || (scopes.length === 0 && !grant.resources?.[resource])) resources[resource] = left;
  }
  return {
    missingOIDCScope: (missing.missingOIDCScope ?? []).filter((s) => !oidc.has(s)),
    missingOIDCClaims: (missing.missingOIDCClaims ?? []).filter((c) => !claims.has(c)),
    missingResourceScopes: resources,
  };
}

export function isEmpty(m: MissingAccess): boolean {
  return !m.missingOIDCScope?.length && !m.missingOIDCClaims?.length && Object.keys(m.missingResourceScopes ?? {}).length === 0;
}

/**
 * Adds the missing access to the session's grant, else to `remembered`, else to a new grant;
 * returns the interaction result (always naming the grant) and the grant id.
 */
export async function grantRequestedAccess(
  provider: Provider,
  details: Details,
  remembered?: Grant,
): Promise<{ result: InteractionResults; grantId: string }> {
  const { params, session } = details;
  const accountId = session?.accountId;
  if (!accountId) throw new Error('consent without a logged-in account');
  const clientId = String(params.client_id);

  let grant = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
  // A revoked or expired session grant is replaced, never resurrected.
  if (!grant || grant.accountId !== accountId || grant.clientId !== clientId) grant = remembered;
  if (!grant) grant = new provider.Grant({ accountId, clientId });

  const missing = missingAccess(details);
  // oidc-provider treats the registered scope of a client as an allowlist: both the OIDC scopes and every resource's scopes must be granted.
  if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  return { result: { consent: { grantId } }, grantId };
}
