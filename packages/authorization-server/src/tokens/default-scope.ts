/**
 * oidc-provider answers an authorization request without `scope` with `access_denied` ("no
 * scope was granted"). MCP clients may legitimately omit scope (no `scopes_supported`, or a
 * generic OAuth tester), so the resource's configured `defaultScopes` are filled in, and a
 * request that still has no scope gets the clearer `invalid_scope`.
 */
import type { Request, Response, NextFunction, RequestHandler } from 'express';
import type { ResourceRegistry } from './resources.js';

export function defaultScopeMiddleware(resources: ResourceRegistry): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const url = new URL(req.url, 'http://placeholder');
    const scope = url.searchParams.get('scope');
    if (scope && scope.trim()) return next();
    if (url.searchParams.has('request_uri') || url.searchParams.has('request')) return next();
    const indicators = url.searchParams.getAll('resource');
    const chosen = indicators.length ? indicators : resources.defaultResource ? [resources.defaultResource] : [];
    const scopes = new Set<string>();
    for (const indicator of chosen) for (const s of resources.get(indicator)?.defaultScopes ?? []) scopes.add(s);
    if (scopes.size === 0) return next();
    url.searchParams.set('scope', [...scopes].join(' '));
    req.url = `${url.pathname}${url.search}`;
    // oidc-provider derives its mount path from originalUrl vs url: keep them consistent.
    req.originalUrl = req.url;
    next();
  };
}
