/**
 * What the consent and account pages say about a resource and a scope: the resource's display
 * name (`resources[].name`, e.g. the MCP server's PRM `resource_name`) and every scope's human
 * description — the resource's own (`resources[].scopes`), else for the OpenID Connect scopes
 * `scopeDescriptions` over {@link DEFAULT_SCOPE_DESCRIPTIONS}. A scope without one is shown as
 * unknown, never as if its name explained it.
 */
import type { ResourceRegistry } from '../tokens/resources.js';
import { DEFAULT_SCOPE_DESCRIPTIONS } from '../config/defaults.js';

export { DEFAULT_SCOPE_DESCRIPTIONS };

/** A scope as a page shows it; no `description` = unknown (shown as such). */
export interface ShownScope {
  scope: string;
  description?: string;
}

export interface ScopeText {
  /** The configured display name of a resource, if any. */
  resourceName(resource: string): string | undefined;
  describe(scope: string, resource?: string): ShownScope;
}

export function createScopeText(resources: ResourceRegistry, overrides?: Readonly<Record<string, string>>): ScopeText {
  const account = { ...DEFAULT_SCOPE_DESCRIPTIONS, ...overrides };
  return {
    resourceName: (resource) => resources.get(resource)?.name,
    describe(scope, resource) {
      const own = resource !== undefined ? resources.get(resource)?.scopes[scope] : undefined;
      const description = own ?? (Object.hasOwn(account, scope) ? account[scope] : undefined);
      return description ? { scope, description } : { scope };
    },
  };
}

const MAX_NAME = 120;

/** A display name the operator configures (a resource's, a third-party provider's): shown as is on the pages. */
export function isDisplayName(name: unknown): name is string {
  return typeof name === 'string' && !!name.trim() && name.length <= MAX_NAME && !/[\u0000-\u001f\u007f]/.test(name);
}

export const DISPLAY_NAME_RULE = `must be a non-empty display name of at most ${MAX_NAME} characters, without control characters`;

/** Problems of `resources[].name` and `scopeDescriptions` (see config.ts). */
export function scopeTextConfigProblems(resources: unknown, scopeDescriptions: unknown): string[] {
  const problems: string[] = [];
  if (Array.isArray(resources)) {
    resources.forEach((r: { name?: unknown } | undefined, i) => {
      const name = r?.name;
      if (name === undefined) return;
      if (!isDisplayName(name)) problems.push(`resources[${i}].name: ${DISPLAY_NAME_RULE}`);
    });
  }
  if (scopeDescriptions !== undefined) {
    if (!scopeDescriptions || typeof scopeDescriptions !== 'object' || Array.isArray(scopeDescriptions)) {
      problems.push('scopeDescriptions: must map OpenID Connect scopes to their descriptions');
    } else {
      for (const [scope, description] of Object.entries(scopeDescriptions)) {
        if (!Object.hasOwn(DEFAULT_SCOPE_DESCRIPTIONS, scope))
          problems.push(
            `scopeDescriptions.${scope}: only ${Object.keys(DEFAULT_SCOPE_DESCRIPTIONS).join(', ')} are described here; describe a resource's scopes in resources[].scopes`,
          );
        else if (typeof description !== 'string' || !description.trim())
          problems.push(`scopeDescriptions.${scope}: must be a non-empty string`);
      }
    }
  }
  return problems;
}
