/**
 * Checks that need an access token: it is accepted in the Authorization header only, it is bound
 * to this server (RFC 8707 audience), and a request beyond its scope gets the step-up challenge.
 */
import { canonicalResource } from '@mcp-auth-kit/protocol';
import { decodeJwt } from 'jose';
import { bearerChallengeOf } from './challenge.js';
import { evidence, INITIALIZE, mcpHeaders, type DoctorContext, skipped } from './context.js';

const S_AUDIENCE = 'MCP Authorization §Token Audience Binding and Validation; RFC 8707 §2';
const refused = (status: number | undefined) => status === 401 || status === 403;

export async function checkToken(ctx: DoctorContext): Promise<void> {
  const token = ctx.options.token;
  if (!token) {
    ctx.report(skipped('token-accepted', 'MCP Authorization §Access Token Usage', 'no token given: the checks that need one did not run'));
    return;
  }
  const res = await ctx.probe.send(ctx.url, { headers: mcpHeaders({ authorization: `Bearer ${token}` }), body: INITIALIZE });
  const accepted = res.status !== undefined && !refused(res.status);
  ctx.report({
    id: 'token-accepted',
    status: accepted ? 'pass' : 'fail',
    section: 'MCP Authorization §Token Requirements; RFC 6750 §2.1',
    title: accepted
      ? 'the token is accepted in the Authorization header'
      : `the given token is refused (HTTP ${res.status ?? 'no answer'})`,
    ...evidence(res),
    fix: 'Give a valid, unexpired token issued for this server (its resource URL as audience); check the server trusts the issuer in the PRM.',
  });
  if (!accepted) return;
  checkAudienceClaim(ctx, token);
  await checkOtherResource(ctx);
  await checkQueryString(ctx, token);
  await checkInsufficientScope(ctx, token);
}

function checkAudienceClaim(ctx: DoctorContext, token: string): void {
  let aud: unknown;
  try {
    aud = decodeJwt(token).aud;
  } catch {
    ctx.report(skipped('token-audience-claim', S_AUDIENCE, 'the token is opaque: its audience is not visible'));
    return;
  }
  const server = canonicalResource(ctx.url.href);
  const auds = (Array.isArray(aud) ? aud : [aud]).filter((a): a is string => typeof a === 'string');
  const ok = auds.some((a) => canonicalResource(a) === server);
  ctx.report({
    id: 'token-audience-claim',
    status: ok ? 'pass' : 'fail',
    section: `${S_AUDIENCE}; RFC 9068 §3`,
    title: ok
      ? 'the token is bound to this server (aud)'
      : `the token's aud (${auds.join(', ') || 'none'}) is not this server, and the server accepted it`,
    fix: 'Issue tokens with aud = the `resource` the client sent (RFC 8707; Keycloak: an audience mapper; Auth0: the API identifier) and have the server check aud.',
  });
}

async function checkOtherResource(ctx: DoctorContext): Promise<void> {
  const other = ctx.options.otherResourceToken;
  if (!other) {
    ctx.report(skipped('token-other-resource', S_AUDIENCE, 'no token for another resource given: audience enforcement not tried'));
    return;
  }
  const res = await ctx.probe.send(ctx.url, { headers: mcpHeaders({ authorization: `Bearer ${other}` }), body: INITIALIZE });
  ctx.report({
    id: 'token-other-resource',
    status: res.status === 401 ? 'pass' : 'fail',
    section: S_AUDIENCE,
    title:
      res.status === 401
        ? 'a token issued for another resource is refused'
        : `a token issued for another resource got HTTP ${res.status ?? 'no answer'}, not 401`,
    ...evidence(res),
    fix: 'Validate the audience of every token: it MUST name this server (a token for another service must not work here — token passthrough / confused deputy).',
  });
}

async function checkQueryString(ctx: DoctorContext, token: string): Promise<void> {
  const url = new URL(ctx.url);
  url.searchParams.set('access_token', token);
  const res = await ctx.probe.send(url, { headers: mcpHeaders(), body: INITIALIZE });
  // 400 invalid_request (RFC 6750 §3.1) or 401 as if no token came: either way not accepted
  const ok = res.status !== undefined && res.status >= 400 && res.status < 500;
  ctx.report({
    id: 'token-query-refused',
    status: ok ? 'pass' : 'fail',
    section: 'MCP Authorization §Access Token Usage; RFC 6750 §2.3; OAuth 2.1 §5.2',
    title: ok
      ? `a token in the query string is refused (HTTP ${res.status})`
      : `a token in the query string got HTTP ${res.status ?? 'no answer'}`,
    ...evidence(res),
    fix: 'Read tokens from the Authorization header only: URLs end up in logs and histories.',
  });
}

async function checkInsufficientScope(ctx: DoctorContext, token: string): Promise<void> {
  const probe = ctx.options.scopeProbe;
  const section = 'MCP Authorization §Runtime Insufficient Scope Errors; RFC 6750 §3.1';
  if (!probe) {
    ctx.report(skipped('insufficient-scope', section, "no request beyond the token's scope given: the step-up challenge is not checked"));
    return;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: probe.method, ...(probe.params && { params: probe.params }) });
  const res = await ctx.probe.send(ctx.url, { headers: mcpHeaders({ authorization: `Bearer ${token}` }), body });
  const challenge = bearerChallengeOf(res);
  const scoped = res.status === 403 && challenge?.params.error === 'insufficient_scope';
  const named = scoped && challenge?.params.scope !== undefined;
  ctx.report({
    id: 'insufficient-scope',
    status: named ? 'pass' : res.status !== undefined && !refused(res.status) ? 'warn' : 'fail',
    section,
    title: named
      ? `403 insufficient_scope names the scope needed (${challenge?.params.scope})`
      : scoped
        ? '403 insufficient_scope without `scope`: the client cannot know what to ask for'
        : res.status !== undefined && !refused(res.status)
          ? "the request beyond the token's scope was not refused (the token covers it, or scopes are not enforced)"
          : `a request beyond the token's scope got HTTP ${res.status ?? 'no answer'} without an insufficient_scope challenge`,
    ...evidence(res),
    fix: 'Answer 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="<all scopes the operation needs>", resource_metadata="…"`.',
  });
}
