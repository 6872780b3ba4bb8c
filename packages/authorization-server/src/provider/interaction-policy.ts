/**
 * oidc-provider's default prompts, plus one login check. oidc-provider asks for a login only
 * when the browser session has no account id; a session whose account was disabled (or
 * deleted) since it signed in still has one, while `findAccount` now returns nothing, and the
 * consent step then has no account to work with. Such a session must sign in again.
 */
import { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';

export function createInteractionPolicy(): ReturnType<typeof interactionPolicy.base> {
  const { base, Check } = interactionPolicy;
  const policy = base();
  const login = policy.get('login');
  if (!login) throw new Error('oidc-provider has no login prompt in its base interaction policy');
  login.checks.add(
    new Check('account_unavailable', 'the signed-in account is disabled or no longer exists', (ctx: KoaContextWithOIDC) =>
      ctx.oidc.session?.accountId !== undefined && ctx.oidc.account === undefined ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT,
    ),
    0,
  );
  return policy;
}
