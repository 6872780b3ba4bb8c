/**
 * Refresh tokens of public clients rotate (OAuth 2.1 §4.3.1), and a client that retries a refresh
 * whose answer it lost (the same refresh token twice) must not lose the whole grant for it.
 */
import { canonicalResource } from '@mcp-auth-kit/protocol';
import { evidence, type DoctorContext, skipped } from './context.js';
import type { Exchange } from './probe.js';
import type { RefreshCredentials } from './types.js';

const S_ROTATION = 'OAuth 2.1 §4.3.1; MCP Authorization §Refresh Tokens';
const S_RETRY = 'RFC 9700 §4.14.2; OAuth 2.1 §4.3.1';

/**
 * Where the refresh token may go: the token endpoint of the issuer it came from, found in that
 * issuer's own metadata, and only when nothing before said the server's discovery is wrong. A
 * hostile MCP server names its own AS in its PRM: the token must never follow it there.
 */
function tokenEndpoint(ctx: DoctorContext, issuer: string): { endpoint?: string; why?: string } {
  const failed = ctx.failed().find((f) => f.group === 'resource-metadata' || f.group === 'authorization-server');
  if (failed) return { why: `discovery failed (${failed.id}): the refresh token is not sent` };
  const meta = ctx.found.authorizationServers.get(issuer);
  if (!meta) return { why: `the server names no authorization server ${issuer}: the refresh token is not sent` };
  if (typeof meta.token_endpoint !== 'string') return { why: 'no token endpoint was discovered' };
  return { endpoint: meta.token_endpoint };
}

function refreshRequest(ctx: DoctorContext, endpoint: string, credentials: RefreshCredentials, refreshToken: string): Promise<Exchange> {
  const form = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    resource: canonicalResource(ctx.url.href) ?? ctx.url.href,
  });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (credentials.clientSecret !== undefined) {
    // RFC 6749 §2.3.1: the form-encoded id and secret, base64 together
    const pair = `${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else {
    form.set('client_id', credentials.clientId);
  }
  return ctx.probe.send(endpoint, { headers, body: form.toString() });
}

export async function checkRefresh(ctx: DoctorContext): Promise<void> {
  const credentials = ctx.options.refresh;
  const { endpoint, why } = credentials ? tokenEndpoint(ctx, credentials.issuer) : { why: 'no refresh token given' };
  if (!credentials || !endpoint) {
    ctx.report(skipped('refresh-rotation', S_ROTATION, `${why}: refresh rotation is not checked`));
    return;
  }
  const first = await refreshRequest(ctx, endpoint, credentials, credentials.refreshToken);
  const next = first.json?.refresh_token;
  if (first.status !== 200 || typeof first.json?.access_token !== 'string') {
    ctx.report({
      id: 'refresh-rotation',
      status: 'fail',
      section: S_ROTATION,
      title: `the refresh token was refused (HTTP ${first.status ?? 'no answer'})`,
      ...evidence(first),
      fix: 'Give a live refresh token of this client; refreshing with `resource` set to the server URL must work (RFC 8707 §2.2).',
    });
    return;
  }
  const rotated = typeof next === 'string' && next !== credentials.refreshToken;
  ctx.report({
    id: 'refresh-rotation',
    status: rotated ? 'pass' : 'warn',
    section: S_ROTATION,
    title: rotated ? 'the refresh token rotates' : 'the refresh token does not rotate',
    ...evidence(first),
    fix: 'Rotate refresh tokens of public clients on every use (or sender-constrain them with DPoP).',
  });
  if (!rotated) return;
  await checkRetry(ctx, endpoint, credentials, next);
}

/** The lost-answer retry: the used token once more, then the newest token must still work. */
async function checkRetry(ctx: DoctorContext, endpoint: string, credentials: RefreshCredentials, next: string): Promise<void> {
  const retry = await refreshRequest(ctx, endpoint, credentials, credentials.refreshToken);
  const newest = typeof retry.json?.refresh_token === 'string' && retry.status === 200 ? retry.json.refresh_token : next;
  const after = await refreshRequest(ctx, endpoint, credentials, newest);
  const alive = after.status === 200;
  ctx.report({
    id: 'refresh-retry',
    status: alive ? 'pass' : 'warn',
    section: S_RETRY,
    title: alive
      ? `a retried refresh (HTTP ${retry.status ?? 'no answer'}) leaves the grant usable`
      : 'a retried refresh revoked the whole grant: a client that lost one answer (network error) must log in again',
    sent: `${retry.sent}\n\n${after.sent}`,
    received: `${retry.received}\n\n${after.received}`,
    fix: 'Keep a short grace window in which the previous refresh token answers again (RFC 9700 §4.14.2 allows it; @mcp-auth-kit/authorization-server: refresh grace), or accept that retries log users out.',
  });
}
