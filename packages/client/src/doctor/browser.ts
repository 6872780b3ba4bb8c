/**
 * What browsers add: the server refuses a foreign Origin (Streamable HTTP §Security, DNS
 * rebinding) and lets its own browser clients read metadata and challenges (CORS).
 */
import { evidence, INITIALIZE, mcpHeaders, verdict, type DoctorContext, skipped } from './context.js';

/** `.invalid` never resolves (RFC 6761 §6.4): no real site can be this origin. */
export const FOREIGN_ORIGIN = 'https://doctor-foreign-origin.invalid';
const S_ORIGIN = 'MCP Streamable HTTP §Security (Origin validation)';

export async function checkBrowser(ctx: DoctorContext): Promise<void> {
  await checkForeignOrigin(ctx);
  await checkMetadataCors(ctx);
  await checkPreflight(ctx);
}

async function checkForeignOrigin(ctx: DoctorContext): Promise<void> {
  const token = ctx.options.token;
  const headers = mcpHeaders({ origin: FOREIGN_ORIGIN, ...(token && { authorization: `Bearer ${token}` }) });
  const res = await ctx.probe.send(ctx.url, { headers, body: INITIALIZE });
  const refused = res.status === 403;
  // without a token a 401 may come before any Origin check: only a token tells the two apart
  const unknown = !token && res.status === 401;
  ctx.report({
    id: 'origin-refused',
    status: refused ? 'pass' : unknown ? 'warn' : 'fail',
    section: S_ORIGIN,
    title: refused
      ? 'a request from a foreign Origin is refused with 403'
      : unknown
        ? 'a foreign Origin got 401, not 403: the Origin is checked after authentication or not at all (give a token to tell)'
        : `a request from a foreign Origin got HTTP ${res.status ?? 'no answer'}, not 403`,
    ...evidence(res),
    fix: 'Check `Origin` before anything else and answer 403 when it is present and not one of your allowed origins (@mcp-auth-kit/resource-server does; the SDK: enable DNS-rebinding protection with allowedOrigins).',
  });
}

async function checkMetadataCors(ctx: DoctorContext): Promise<void> {
  const prm = ctx.found.challenge?.params.resource_metadata;
  if (!ctx.found.resourceMetadata || !prm) return;
  const res = await ctx.probe.get(prm, { origin: FOREIGN_ORIGIN });
  const allowed = res.headers.get('access-control-allow-origin');
  ctx.report({
    id: 'cors-metadata',
    status: verdict(allowed === '*' || allowed === FOREIGN_ORIGIN, 'warn'),
    section: 'RFC 9728 §3; MCP Authorization §Protected Resource Metadata Discovery Requirements (browser clients)',
    title: allowed
      ? 'browser clients can read the PRM (CORS)'
      : 'the PRM sends no Access-Control-Allow-Origin: browser-based clients cannot discover the AS',
    ...evidence(res),
    fix: 'Answer the PRM (public data) with `Access-Control-Allow-Origin: *`.',
  });
}

async function checkPreflight(ctx: DoctorContext): Promise<void> {
  const origin = ctx.options.browserOrigin;
  if (!origin) {
    ctx.report(skipped('cors-preflight', 'Fetch §CORS protocol', 'no browser origin given: the CORS preflight is not checked'));
    return;
  }
  const res = await ctx.probe.send(ctx.url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
    },
  });
  const allowHeaders = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
  const ok =
    res.status !== undefined &&
    res.status >= 200 &&
    res.status < 300 &&
    res.headers.get('access-control-allow-origin') === origin &&
    allowHeaders.split(',').some((h) => h.trim() === 'authorization');
  ctx.report({
    id: 'cors-preflight',
    status: verdict(ok),
    section: 'Fetch §CORS protocol; MCP Streamable HTTP §Security',
    title: ok ? `the preflight from ${origin} allows Authorization` : `the preflight from ${origin} does not allow an authorized POST`,
    ...evidence(res),
    fix: 'Answer OPTIONS before the token check, echo the allowed Origin and list Authorization in Access-Control-Allow-Headers (a "*" does not cover Authorization).',
  });
  const challenge = await ctx.probe.send(ctx.url, { headers: mcpHeaders({ origin }), body: INITIALIZE });
  const exposed = (challenge.headers.get('access-control-expose-headers') ?? '').toLowerCase();
  const readable = exposed.split(',').some((h) => h.trim() === 'www-authenticate');
  ctx.report({
    id: 'cors-challenge',
    status: verdict(readable),
    section: 'Fetch §CORS protocol; RFC 9728 §5.1',
    title: readable
      ? 'browser clients can read the 401 challenge'
      : 'WWW-Authenticate is not exposed: a browser client cannot read the challenge',
    ...evidence(challenge),
    fix: 'Send `Access-Control-Expose-Headers: WWW-Authenticate` (and Mcp-Session-Id) with responses to allowed origins.',
  });
}
