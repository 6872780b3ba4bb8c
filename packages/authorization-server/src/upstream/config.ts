/** Configuration of upstream OpenID Connect providers ("Sign in with <name>"). */
import { isScopeToken } from '@mcp-auth-kit/protocol';
import { isSecurePeerUrl, parseUrl } from '../http/urls.js';

import type { UpstreamProviderConfig } from '../config/types.js';

export type { UpstreamProviderConfig };

/** Problems of `upstream` (empty when valid); `asLoopback`: the AS issuer host is loopback. */
export function upstreamConfigProblems(upstream: unknown, asLoopback: boolean): string[] {
  if (upstream === undefined) return [];
  if (!Array.isArray(upstream))
    return ['upstream: must be an array of { name, issuer, clientId, clientSecret?, scopes?, allowSignup?, allowPrivateNetwork? }'];
  const problems: string[] = [];
  const names = new Set<string>();
  upstream.forEach((u: Partial<UpstreamProviderConfig> | null, i) => {
    const where = `upstream[${i}]`;
    if (!u || typeof u !== 'object') {
      problems.push(`${where}: must be an object`);
      return;
    }
    if (typeof u.name !== 'string' || !u.name.trim()) problems.push(`${where}.name: required`);
    else if (names.has(u.name)) problems.push(`${where}.name: duplicate "${u.name}"`);
    else names.add(u.name);
    const url = typeof u.issuer === 'string' ? parseUrl(u.issuer) : undefined;
    if (!url) problems.push(`${where}.issuer: must be an absolute URL`);
    else if (!isSecurePeerUrl(url, asLoopback)) {
      problems.push(`${where}.issuer: must use https (http only for a loopback provider on a loopback issuer, for development)`);
    }
    if (typeof u.clientId !== 'string' || !u.clientId) problems.push(`${where}.clientId: required`);
    if (u.clientSecret !== undefined && (typeof u.clientSecret !== 'string' || !u.clientSecret))
      problems.push(`${where}.clientSecret: must be a non-empty string`);
    if (u.scopes !== undefined && (!Array.isArray(u.scopes) || u.scopes.some((s) => !isScopeToken(s)))) {
      problems.push(`${where}.scopes: must be an array of scope tokens`);
    }
    if (u.allowSignup !== undefined && typeof u.allowSignup !== 'boolean') problems.push(`${where}.allowSignup: must be a boolean`);
    if (u.allowPrivateNetwork !== undefined && typeof u.allowPrivateNetwork !== 'boolean')
      problems.push(`${where}.allowPrivateNetwork: must be a boolean`);
  });
  return problems;
}
