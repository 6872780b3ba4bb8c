/**
 * The first thing a client meets: an MCP request without a token must get 401 with a Bearer
 * challenge that names the Protected Resource Metadata (RFC 9728 §5.1, RFC 6750 §3).
 */
import { parseWwwAuthenticate, type Challenge } from '@mcp-auth-kit/protocol';
import { evidence, INITIALIZE, mcpHeaders, verdict, type DoctorContext } from './context.js';
import type { Exchange } from './probe.js';

const S_401 = 'MCP Authorization §Authorization Server Discovery; RFC 9728 §5.1';
const S_RFC6750 = 'RFC 6750 §3.1';

/** The Bearer challenge of a response, or undefined (none, or a header that does not parse). */
export function bearerChallengeOf(exchange: Exchange): Challenge | undefined {
  const header = exchange.headers.get('www-authenticate');
  if (!header) return undefined;
  try {
    return parseWwwAuthenticate(header).find((c) => c.scheme === 'bearer' || c.scheme === 'dpop');
  } catch {
    return undefined;
  }
}

export async function checkChallenge(ctx: DoctorContext): Promise<void> {
  const res = await ctx.probe.send(ctx.url, { headers: mcpHeaders(), body: INITIALIZE });
  const at = evidence(res);
  if (res.status !== 401) {
    ctx.report({
      id: 'unauthenticated-401',
      status: 'fail',
      section: S_401,
      title: res.status === undefined ? 'the MCP server did not answer' : `a request without a token got HTTP ${res.status}, not 401`,
      ...at,
      fix:
        res.status === undefined
          ? 'Check the URL (the MCP endpoint, e.g. https://host/mcp) and that it is reachable; use --allow-private for loopback or an intranet.'
          : 'Protect the MCP endpoint: answer requests without a valid token with 401 and a Bearer challenge (e.g. @mcp-auth-kit/resource-server rs.protect).',
    });
    return;
  }
  ctx.report({ id: 'unauthenticated-401', status: 'pass', section: S_401, title: 'a request without a token gets 401', ...at });
  const challenge = bearerChallengeOf(res);
  ctx.report({
    id: 'challenge-bearer',
    status: verdict(challenge !== undefined),
    section: S_RFC6750,
    title: challenge ? 'the 401 carries a Bearer challenge' : 'the 401 carries no parsable Bearer challenge in WWW-Authenticate',
    ...at,
    fix: 'Send `WWW-Authenticate: Bearer resource_metadata="<PRM URL>", scope="<scopes>"` with every 401.',
  });
  if (!challenge) return;
  ctx.found.challenge = challenge;
  const metadata = challenge.params.resource_metadata;
  ctx.report({
    id: 'challenge-resource-metadata',
    // MCP lets a server rely on the well-known URI instead: the PRM check decides whether that one exists
    status: verdict(metadata !== undefined, 'warn'),
    section: S_401,
    title: metadata ? 'the challenge names the Protected Resource Metadata' : 'the challenge has no `resource_metadata` parameter',
    ...at,
    fix: 'Add `resource_metadata="<PRM URL>"` to the Bearer challenge; clients then find the PRM without guessing well-known URLs (Keycloak/Auth0/Entra do not send it: the MCP server must).',
  });
  ctx.report({
    id: 'challenge-scope',
    status: verdict(challenge.params.scope !== undefined, 'warn'),
    section: 'MCP Authorization §Scope Selection Strategy; RFC 6750 §3',
    title: challenge.params.scope ? `the challenge names the scope (${challenge.params.scope})` : 'the challenge names no `scope`',
    ...at,
    fix: 'Add `scope="<scopes a client needs>"` to the 401 challenge, so clients ask for what the server needs.',
  });
  ctx.report({
    id: 'challenge-no-error',
    status: verdict(challenge.params.error === undefined, 'warn'),
    section: S_RFC6750,
    title:
      challenge.params.error === undefined
        ? 'no `error` code on a request that carried no credentials'
        : `an \`error\` (${challenge.params.error}) on a request that carried no credentials`,
    ...at,
    fix: 'RFC 6750 §3.1: a request without credentials gets a challenge without an `error` code (not invalid_token).',
  });
}
