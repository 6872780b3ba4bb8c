/** Turns the consent prompt's missing scopes into a saved oidc-provider Grant. */
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

export async function grantRequestedAccess(provider: Provider, details: Details): Promise<InteractionResults> {
  const { prompt, params, session } = details;
  const accountId = session?.accountId;
  if (!accountId) throw new Error('consent without a logged-in account');
  const clientId = String(params.client_id);

  let grant = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
  if (!grant) grant = new provider.Grant({ accountId, clientId });

  const missing = prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  // NOTES gotcha 3: both the OIDC scopes and every resource's scopes must be granted.
  if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  return details.grantId ? { consent: {} } : { consent: { grantId } };
}
