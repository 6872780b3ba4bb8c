import { splitScope } from '@mcp-auth-kit/protocol';

export { splitScope };

export function joinScope(scopes: Iterable<string>): string | undefined {
  const list = [...new Set(scopes)];
  return list.length ? list.join(' ') : undefined;
}

/** Scope union for step-up (Step-Up Authorization Flow, step 2). */
export function unionScope(...scopes: (string | undefined)[]): string | undefined {
  return joinScope(scopes.flatMap(splitScope));
}

/** True when every scope of `needed` is in `have`. */
export function scopeCovers(have: string | undefined, needed: string | undefined): boolean {
  const h = new Set(splitScope(have));
  return splitScope(needed).every((s) => h.has(s));
}

export interface ScopeSelectionInput {
  /** `scope` of the 401 challenge. */
  challengeScope?: string | undefined;
  /** PRM `scopes_supported`. */
  scopesSupported?: string[] | undefined;
  /** AS metadata `scopes_supported` (for `offline_access`). */
  asScopesSupported?: string[] | undefined;
  /** Ask for a refresh token via `offline_access` when the AS advertises it. */
  wantRefreshToken?: boolean;
}

/**
 * MCP Scope Selection Strategy: the challenge's `scope`, else all PRM `scopes_supported`, else
 * no `scope` at all; plus `offline_access` when the AS lists it and refresh tokens are wanted
 * (Refresh Tokens: MAY). Returns undefined when the `scope` parameter is to be omitted.
 */
export function selectScope(input: ScopeSelectionInput): string | undefined {
  let base: string[];
  if (input.challengeScope) base = splitScope(input.challengeScope);
  else if (input.scopesSupported) base = [...input.scopesSupported];
  else base = [];
  if (base.length === 0) return undefined;
  if (input.wantRefreshToken && input.asScopesSupported?.includes('offline_access')) base.push('offline_access');
  return joinScope(base);
}
