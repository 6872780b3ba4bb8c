/**
 * The two pieces of oidc-provider 9 the refresh grace needs and its public API does not
 * expose: the registered `refresh_token` grant handler (to wrap it, keeping its parameters)
 * and the grant helpers that validate DPoP proofs the way the provider does. Loaded from the
 * provider's own module files (the package has no `exports` map), so they share its state;
 * the shapes are checked at start-up so a provider upgrade fails loudly, never silently.
 */
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

export type GrantHandler = (ctx: KoaContextWithOIDC) => Promise<void>;

export interface DpopResult {
  thumbprint: string;
  jti: string;
  iat: number;
}

export interface RefreshGrantInternals {
  /** The handler currently registered for `refresh_token` (bound to the provider). */
  handler: GrantHandler;
  /** Its parameter allowlist and the parameters allowed to repeat (e.g. `resource`). */
  parameters: string[];
  dupes?: string[];
  validateDpop(ctx: KoaContextWithOIDC): Promise<DpopResult | undefined>;
  checkDpopRequired(ctx: KoaContextWithOIDC, dPoP: DpopResult | undefined): void;
  checkDpopReplay(ctx: KoaContextWithOIDC, dPoP: DpopResult, clientId: string): Promise<void>;
}

interface ProviderInstanceState {
  grantTypeHandlers?: Map<string, GrantHandler>;
  grantTypeParams?: Map<string | undefined, Set<string>>;
  grantTypeDupes?: Map<string, Set<string>>;
}

type Helper = (provider: Provider, ctx: KoaContextWithOIDC, ...rest: unknown[]) => unknown;

function missing(what: string): Error {
  return new Error(
    `refresh grace: oidc-provider's ${what} was not found (an oidc-provider version other than 9?); ` +
      'set refreshTokens.reuseGraceSeconds to 0 to start without the grace window',
  );
}

export async function loadRefreshGrantInternals(provider: Provider): Promise<RefreshGrantInternals> {
  // Specifiers in variables: these files have no type declarations, and are loaded by Node
  // (not bundled) so the module state (the per-provider WeakMap) is the provider's own.
  const weakCacheModule = 'oidc-provider/lib/helpers/weak_cache.js';
  const grantsModule = 'oidc-provider/lib/helpers/grants.js';
  const [{ default: instance }, helpers] = (await Promise.all([import(weakCacheModule), import(grantsModule)])) as [
    { default?: (p: Provider) => ProviderInstanceState },
    Record<string, Helper | undefined>,
  ];
  if (typeof instance !== 'function') throw missing('instance state');
  const state = instance(provider) as ProviderInstanceState | undefined;
  if (!state) throw missing('instance state');
  const handler = state.grantTypeHandlers?.get('refresh_token');
  const params = state.grantTypeParams?.get('refresh_token');
  if (typeof handler !== 'function' || !params) throw missing('refresh_token grant handler');
  const { validateDpop, checkDpopRequired, checkDpopReplay } = helpers;
  if (typeof validateDpop !== 'function' || typeof checkDpopRequired !== 'function' || typeof checkDpopReplay !== 'function') {
    throw missing('DPoP grant helpers');
  }
  const dupes = state.grantTypeDupes?.get('refresh_token');
  return {
    handler,
    parameters: [...params],
    dupes: dupes ? [...dupes] : undefined,
    validateDpop: async (ctx) => (await validateDpop(provider, ctx)) as DpopResult | undefined,
    checkDpopRequired: (ctx, dPoP) => void checkDpopRequired(provider, ctx, dPoP),
    checkDpopReplay: async (ctx, dPoP, clientId) => void (await checkDpopReplay(provider, ctx, dPoP, clientId)),
  };
}
