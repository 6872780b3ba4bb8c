/**
 * RFC 8414 Authorization Server Metadata, found the way MCP orders it, and what an MCP client
 * needs from it: the issuer it was told, PKCE S256, a way to register, RFC 9207, public clients.
 */
import { authorizationServerMetadataUrls } from '@mcp-auth-kit/protocol';
import { evidence, verdict, type DoctorContext, skipped } from './context.js';
import type { Exchange } from './probe.js';

const S_DISCOVERY = 'MCP Authorization §Authorization Server Metadata Discovery; RFC 8414 §3.1';
/** More authorization servers are not checked: one request budget serves the whole run. */
const MAX_SERVERS = 2;

export async function checkAuthorizationServers(ctx: DoctorContext): Promise<void> {
  const listed = ctx.found.resourceMetadata?.authorization_servers;
  const issuers = Array.isArray(listed) ? listed.filter((v): v is string => typeof v === 'string').slice(0, MAX_SERVERS) : [];
  if (issuers.length === 0) {
    ctx.report(skipped('as-metadata', S_DISCOVERY, 'no authorization server to check (see the PRM findings)'));
    return;
  }
  for (const issuer of issuers) await checkOne(ctx, issuer);
}

async function checkOne(ctx: DoctorContext, issuer: string): Promise<void> {
  let urls: URL[];
  try {
    urls = authorizationServerMetadataUrls(issuer);
  } catch {
    ctx.report({ id: 'as-metadata', status: 'fail', section: S_DISCOVERY, title: `the authorization server ${issuer} is not a URL` });
    return;
  }
  const tried: Exchange[] = [];
  let found: (Exchange & { json: Record<string, unknown> }) | undefined;
  for (const url of urls) {
    const res = await ctx.probe.get(url);
    tried.push(res);
    if (res.status === 200 && res.json) {
      found = res as Exchange & { json: Record<string, unknown> };
      break;
    }
  }
  if (!found) {
    ctx.report({
      id: 'as-metadata',
      status: 'fail',
      section: S_DISCOVERY,
      title: `no metadata for ${issuer} at any URL MCP clients try`,
      sent: tried.map((t) => t.sent).join('\n\n'),
      received: tried.map((t) => t.received).join('\n\n'),
      fix: `Serve RFC 8414 metadata at ${urls[0]!.href} (or OpenID discovery at ${urls[1]!.href}); check that authorization_servers names the issuer, not a login page.`,
    });
    return;
  }
  ctx.report({ id: 'as-metadata', status: 'pass', section: S_DISCOVERY, title: `metadata of ${issuer} found`, ...evidence(found) });
  const meta = found.json;
  const issuerOk = meta.issuer === issuer;
  ctx.report({
    id: 'as-issuer',
    status: verdict(issuerOk),
    section: 'RFC 8414 §3.3; MCP Authorization §Authorization Server Metadata Discovery',
    title: issuerOk
      ? 'the metadata `issuer` equals the identifier in the PRM'
      : `the metadata \`issuer\` is ${JSON.stringify(meta.issuer)}, not ${issuer}`,
    ...evidence(found),
    fix: 'Make the PRM list exactly the AS `issuer` (trailing slash and path included; Auth0 issuers end in "/", Entra v2 issuers end in "/v2.0"), or set the AS issuer (Keycloak: frontend URL / hostname) to the public URL.',
  });
  if (!issuerOk) return;
  ctx.found.authorizationServers.set(issuer, meta);
  checkCapabilities(ctx, found);
}

function list(meta: Record<string, unknown>, name: string): string[] {
  const value = meta[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function checkCapabilities(ctx: DoctorContext, found: Exchange & { json: Record<string, unknown> }): void {
  const meta = found.json;
  const at = evidence(found);
  const pkce = list(meta, 'code_challenge_methods_supported');
  ctx.report({
    id: 'as-pkce',
    status: verdict(pkce.includes('S256')),
    section: 'MCP Authorization §Authorization Code Protection; RFC 8414 §2; RFC 7636 §4.2',
    title: pkce.includes('S256')
      ? 'PKCE S256 is advertised'
      : 'code_challenge_methods_supported does not list S256: MCP clients MUST refuse this AS',
    ...at,
    fix: 'Advertise `code_challenge_methods_supported: ["S256"]` (Entra ID does not: put an AS that does in front; Keycloak: set the client\'s "PKCE method" to S256).',
  });
  const cimd = meta.client_id_metadata_document_supported === true;
  const dcr = typeof meta.registration_endpoint === 'string';
  ctx.report({
    id: 'as-registration',
    status: verdict(cimd || dcr, 'warn'),
    section: 'MCP Authorization §Client Registration',
    title:
      cimd || dcr
        ? `clients can register: ${[cimd && 'CIMD', dcr && 'DCR'].filter(Boolean).join(', ')}`
        : 'no CIMD and no DCR: only pre-registered clients can connect',
    ...at,
    fix: 'Offer Client ID Metadata Documents (client_id_metadata_document_supported) or RFC 7591 registration (Auth0: enable "Dynamic Client Registration"; Keycloak: allow anonymous client registration policies).',
  });
  const iss = meta.authorization_response_iss_parameter_supported === true;
  ctx.report({
    id: 'as-iss-parameter',
    status: verdict(iss, 'warn'),
    section: 'RFC 9207 §3; MCP Authorization §Authorization Response Validation',
    title: iss
      ? 'the AS sends `iss` in authorization responses (RFC 9207)'
      : 'authorization_response_iss_parameter_supported is not true: clients cannot detect mix-up attacks',
    ...at,
    fix: 'Return `iss` in every authorization response and advertise authorization_response_iss_parameter_supported: true.',
  });
  const methods =
    meta.token_endpoint_auth_methods_supported === undefined
      ? ['client_secret_basic']
      : list(meta, 'token_endpoint_auth_methods_supported');
  ctx.report({
    id: 'as-token-auth-methods',
    status: verdict(methods.includes('none'), 'warn'),
    section: 'RFC 8414 §2; OAuth 2.1 §2.1; MCP Authorization §Client ID Metadata Documents',
    title: methods.includes('none')
      ? `token endpoint auth methods: ${methods.join(', ')}`
      : `public clients are not allowed at the token endpoint (${methods.join(', ')})`,
    ...at,
    fix: 'List "none" in token_endpoint_auth_methods_supported: MCP hosts (desktop, CLI, CIMD clients) are public clients.',
  });
  const grants = meta.grant_types_supported === undefined ? ['authorization_code', 'implicit'] : list(meta, 'grant_types_supported');
  ctx.report({
    id: 'as-grant-types',
    status: verdict(grants.includes('authorization_code') && grants.includes('refresh_token'), 'warn'),
    section: 'RFC 8414 §2; MCP Authorization §Refresh Tokens',
    title: `grant types: ${grants.join(', ')}`,
    ...at,
    fix: 'Support authorization_code and refresh_token (and advertise them): without refresh tokens users log in again every hour.',
  });
  const dpop = list(meta, 'dpop_signing_alg_values_supported');
  ctx.report({
    id: 'as-dpop',
    status: dpop.length > 0 ? 'pass' : 'skip',
    section: 'RFC 9449 §5.1',
    title: dpop.length > 0 ? `DPoP offered (${dpop.join(', ')})` : 'DPoP not offered (optional): tokens are plain bearer tokens',
    ...at,
  });
}
