import { ResourceServerError } from './errors.js';
import type { ChallengeScopeStrategy, ScopeHierarchy, ScopePolicy } from './config/types.js';
import type { JsonRpcMessageLike } from './types.js';

export type { ChallengeScopeStrategy, ScopeHierarchy, ScopePolicy };

/**
 * The union of scopes needed by a request body: `default`, plus per-method, plus per-tool
 * scopes of every message (a JSON-RPC batch needs everything any of its messages needs).
 */
export function requiredScopes(body: unknown, policy: ScopePolicy): string[] {
  const needed = new Set<string>(policy.default ?? []);
  const messages: unknown[] = Array.isArray(body) ? body : body === undefined ? [] : [body];
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const { method, params } = message as JsonRpcMessageLike;
    if (typeof method !== 'string') continue;
    for (const s of lookup(policy.methods, method)) needed.add(s);
    if (method === 'tools/call' && typeof params === 'object' && params !== null) {
      const name = (params as { name?: unknown }).name;
      if (typeof name === 'string') for (const s of lookup(policy.tools, name)) needed.add(s);
    }
  }
  return [...needed];
}

function lookup(table: Readonly<Record<string, readonly string[]>> | undefined, key: string): readonly string[] {
  // own properties only: a tool named "__proto__" or "constructor" must not reach Object.prototype
  return table !== undefined && Object.hasOwn(table, key) ? (table[key] ?? []) : [];
}

/** Granted scopes plus everything they imply (transitively). */
export function expandScopes(granted: Iterable<string>, hierarchy: ScopeHierarchy = {}): Set<string> {
  const out = new Set<string>();
  const queue = [...granted];
  while (queue.length > 0) {
    const scope = queue.pop()!;
    if (out.has(scope)) continue;
    out.add(scope);
    if (Object.hasOwn(hierarchy, scope)) queue.push(...(hierarchy[scope] ?? []));
  }
  return out;
}

/** Scopes of `required` not covered by `granted` (hierarchy-aware). */
export function missingScopes(granted: Iterable<string>, required: readonly string[], hierarchy?: ScopeHierarchy): string[] {
  const have = expandScopes(granted, hierarchy);
  return required.filter((s) => !have.has(s));
}

function allIncluded(required: readonly string[], granted: readonly string[]): boolean {
  for (const s of required) if (!granted.includes(s)) return false;
  return true;
}

/**
 * Checks the token's scopes against what the request needs.
 * The 403 challenge carries every scope the operation needs in one go (spec §Scope Challenge
 * Handling: no incremental challenges); with `required-and-granted` it also repeats the
 * already-granted scopes this server knows about, for clients that do not union on step-up.
 * @throws {ResourceServerError} `insufficient_scope` with `scope` set.
 */
export function checkScopes(
  granted: readonly string[],
  required: readonly string[],
  options: { hierarchy?: ScopeHierarchy; strategy?: ChallengeScopeStrategy; knownScopes?: ReadonlySet<string> } = {},
): void {
  // the usual case, every required scope granted as such, needs no hierarchy expansion
  if (allIncluded(required, granted)) return;
  const missing = missingScopes(granted, required, options.hierarchy);
  if (missing.length === 0) return;
  const scope = new Set(required);
  if (options.strategy === 'required-and-granted') {
    for (const s of granted) {
      if (s !== 'offline_access' && (options.knownScopes?.has(s) ?? false)) scope.add(s);
    }
  }
  throw new ResourceServerError('insufficient_scope', {
    scope: [...scope],
    detail: { missing, required, granted },
  });
}
