import { authenticateClient } from './client-auth.js';
import { DEFAULTS } from './config/defaults.js';
import { ResourceServerError } from './errors.js';
import { readJsonResponse } from './as-metadata.js';
import { audienceIncludes } from './resource-uri.js';
import { splitScope } from './verify-jwt.js';
import type { IntrospectionOptions } from './config/types.js';
import type { VerifiedAccessToken } from './types.js';

export type { IntrospectionOptions };

export interface IntrospectContext {
  resource: string;
  issuers: readonly string[];
  clockTolerance: number;
  now: () => number;
  fetch: typeof fetch;
  timeoutMs: number;
}

/**
 * Validates an opaque token with RFC 7662 introspection: the response must say `active: true`,
 * name this resource in `aud`, carry a `client_id`, not be expired, and (when `iss` is present)
 * come from a configured issuer. Any transport or format failure rejects (fail closed).
 * @throws {ResourceServerError}
 */
export async function introspectAccessToken(
  token: string,
  options: IntrospectionOptions,
  ctx: IntrospectContext,
): Promise<VerifiedAccessToken> {
  const form = new URLSearchParams({ token, token_type_hint: 'access_token' });
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/x-www-form-urlencoded',
  };
  authenticateClient(options, form, headers);

  let body: unknown;
  try {
    const response = await ctx.fetch(options.endpoint, {
      method: 'POST',
      headers,
      body: form.toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new ResourceServerError('introspection_failed', { detail: { status: response.status } });
    }
    body = await readJsonResponse(response, 64 * 1024);
  } catch (cause) {
    if (cause instanceof ResourceServerError) throw cause;
    throw new ResourceServerError('introspection_failed', {
      cause,
      detail: { message: cause instanceof Error ? cause.message : String(cause) },
    });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ResourceServerError('introspection_failed', { detail: { message: 'not an object' } });
  }
  const claims = body as Record<string, unknown>;
  if (claims.active !== true) throw new ResourceServerError('introspection_inactive');

  const nowSeconds = ctx.now() / 1000;
  if (claims.exp !== undefined) {
    if (typeof claims.exp !== 'number') {
      throw new ResourceServerError('claim_invalid', { detail: { claim: 'exp' } });
    }
    if (claims.exp + ctx.clockTolerance <= nowSeconds) throw new ResourceServerError('expired');
  }
  if (typeof claims.nbf === 'number' && claims.nbf - ctx.clockTolerance > nowSeconds) {
    throw new ResourceServerError('not_yet_valid');
  }
  if (claims.iss !== undefined && (typeof claims.iss !== 'string' || !ctx.issuers.includes(claims.iss))) {
    throw new ResourceServerError('iss_untrusted', { detail: { expected: ctx.issuers, actual: claims.iss } });
  }
  if (!audienceIncludes(claims.aud, ctx.resource)) {
    throw new ResourceServerError('aud_mismatch', { detail: { expected: ctx.resource, actual: claims.aud } });
  }
  if (typeof claims.client_id !== 'string' || claims.client_id === '') {
    throw new ResourceServerError('missing_claim', { detail: { claim: 'client_id' } });
  }
  // RFC 9449 §6.2: a DPoP-bound token introspects as `token_type: "DPoP"` with `cnf.jkt`
  if (typeof claims.token_type === 'string' && !['bearer', 'access_token', 'dpop'].includes(claims.token_type.toLowerCase())) {
    throw new ResourceServerError('claim_invalid', { detail: { claim: 'token_type', actual: claims.token_type } });
  }
  if (typeof claims.token_type === 'string' && claims.token_type.toLowerCase() === 'dpop' && claims.cnf === undefined) {
    throw new ResourceServerError('claim_invalid', { detail: { claim: 'cnf', actual: 'missing for a DPoP token' } });
  }
  const ttl = options.cacheTtlSeconds ?? DEFAULTS.introspection.cacheTtlSeconds;
  return {
    token,
    source: 'introspection',
    issuer: typeof claims.iss === 'string' ? claims.iss : undefined,
    subject: typeof claims.sub === 'string' ? claims.sub : undefined,
    clientId: claims.client_id,
    jti: typeof claims.jti === 'string' ? claims.jti : undefined,
    scopes: splitScope(claims.scope),
    // without `exp`, the cache bound below is the only lifetime we know
    expiresAt: typeof claims.exp === 'number' ? claims.exp : Math.floor(nowSeconds + ttl),
    resource: ctx.resource,
    claims,
  };
}
