/** What the grace reads of a token request (oidc-provider's `ctx.oidc`, public fields only). */
import type { KoaContextWithOIDC } from 'oidc-provider';

/** The parameters that shape a refresh response; a grace hit needs the same ones. */
export function requestFingerprint(params: Record<string, unknown>): string {
  const resource = params.resource;
  return JSON.stringify([params.scope ?? null, Array.isArray(resource) ? [...resource].sort() : (resource ?? null)]);
}

export function isRefreshRequest(ctx: KoaContextWithOIDC): boolean {
  return ctx.oidc?.route === 'token' && ctx.oidc.params?.grant_type === 'refresh_token';
}

export function jsonBody(ctx: KoaContextWithOIDC): Record<string, unknown> | undefined {
  const body = ctx.body;
  return body && typeof body === 'object' && !Buffer.isBuffer(body) ? (body as Record<string, unknown>) : undefined;
}
