/**
 * RFC 9728 Protected Resource Metadata: where a client finds it (the challenge's URL, then the
 * well-known forms in MCP's order), and that it names this server and its authorization servers.
 */
import { canonicalResource, protectedResourceMetadataUrl, protectedResourceMetadataUrls } from '@mcp-auth-kit/protocol';
import { resourceMatchesServer } from '../url.js';
import { evidence, verdict, type DoctorContext } from './context.js';
import type { Exchange } from './probe.js';

const S_DISCOVERY = 'MCP Authorization §Protected Resource Metadata Discovery Requirements; RFC 9728 §3.1';

type Document = Exchange & { json: Record<string, unknown> };

function isDocument(res: Exchange): res is Document {
  return res.status === 200 && res.json !== undefined;
}

/** Fetches the PRM at the challenge's URL and both well-known forms; the first that answers is the client's. */
async function fetchForms(ctx: DoctorContext): Promise<{ clients?: Document; forms: Exchange[] }> {
  const named = ctx.found.challenge?.params.resource_metadata;
  const wellKnown = protectedResourceMetadataUrls(ctx.url).map((u) => u.href);
  const forms: Exchange[] = [];
  let clients: Document | undefined;
  if (named) {
    const res = await ctx.probe.get(named);
    forms.push(res);
    if (isDocument(res)) clients = res;
  }
  for (const url of wellKnown) {
    if (url === named) continue;
    const res = await ctx.probe.get(url);
    forms.push(res);
    if (!clients && isDocument(res)) clients = res;
  }
  return { ...(clients && { clients }), forms };
}

export async function checkResourceMetadata(ctx: DoctorContext): Promise<void> {
  const { clients, forms } = await fetchForms(ctx);
  const pathForm = protectedResourceMetadataUrl(ctx.url);
  const atPath = forms.find((f) => f.sent.split('\n')[0] === `GET ${pathForm}`);
  if (!clients) {
    ctx.report({
      id: 'prm-found',
      status: 'fail',
      section: S_DISCOVERY,
      title: 'no Protected Resource Metadata document at the challenge URL or either well-known URL',
      sent: forms.map((f) => f.sent).join('\n\n'),
      received: forms.map((f) => f.received).join('\n\n'),
      fix: `Serve the RFC 9728 document at ${pathForm} (and name it in the 401 challenge's resource_metadata).`,
    });
    return;
  }
  ctx.report({
    id: 'prm-found',
    status: 'pass',
    section: S_DISCOVERY,
    title: 'clients find the Protected Resource Metadata',
    ...evidence(clients),
  });
  const pathOk = atPath !== undefined && isDocument(atPath);
  ctx.report({
    id: 'prm-well-known',
    status: verdict(pathOk, 'warn'),
    section: S_DISCOVERY,
    title: pathOk
      ? 'the PRM is served at the path-inserted well-known URL'
      : 'the PRM is not at the path-inserted well-known URL (clients that ignore the challenge try it first)',
    ...evidence(atPath),
    fix: `Serve the same document at ${pathForm}; clients that get no resource_metadata (or ignore it) look there first.`,
  });
  ctx.found.resourceMetadata = clients.json;
  checkResourceField(ctx, clients);
  checkAuthorizationServers(ctx, clients);
}

function checkResourceField(ctx: DoctorContext, res: Document): void {
  const resource = res.json.resource;
  const server = canonicalResource(ctx.url.href);
  const exact = typeof resource === 'string' && canonicalResource(resource) === server;
  const prefix = typeof resource === 'string' && !exact && resourceMatchesServer(resource, ctx.url);
  ctx.report({
    id: 'prm-resource',
    status: exact ? 'pass' : prefix ? 'warn' : 'fail',
    section: 'RFC 9728 §3.3; MCP Authorization §Canonical Server URI',
    title: exact
      ? 'the PRM `resource` is the server URL'
      : `the PRM \`resource\` is ${JSON.stringify(resource)}, not the server URL ${ctx.url.href}`,
    ...evidence(res),
    fix: prefix
      ? `Set \`resource\` to the MCP endpoint's canonical URI (${server}); tokens are bound to this value (RFC 8707 audience).`
      : `Set \`resource\` to ${server}: clients MUST refuse a PRM whose resource is not the server they called (a proxy or mount path often breaks this: configure the public URL, not the internal one).`,
  });
}

function checkAuthorizationServers(ctx: DoctorContext, res: Document): void {
  const list = res.json.authorization_servers;
  const ok = Array.isArray(list) && list.length > 0 && list.every((v) => typeof v === 'string' && canonicalResource(v) !== undefined);
  ctx.report({
    id: 'prm-authorization-servers',
    status: verdict(ok),
    section: 'RFC 9728 §2; MCP Authorization §Authorization Server Location',
    title: ok ? `the PRM names ${(list as string[]).length} authorization server(s)` : 'the PRM has no usable `authorization_servers`',
    ...evidence(res),
    fix: 'List the issuer identifier of your authorization server in `authorization_servers` (exactly the `issuer` of its metadata).',
  });
  const scopes = res.json.scopes_supported;
  ctx.report({
    id: 'prm-scopes-supported',
    status: verdict(Array.isArray(scopes) && scopes.length > 0, 'warn'),
    section: 'MCP Authorization §Scope Selection Strategy; RFC 9728 §2',
    title:
      Array.isArray(scopes) && scopes.length > 0
        ? `the PRM lists scopes_supported (${scopes.join(' ')})`
        : 'the PRM lists no scopes_supported',
    ...evidence(res),
    fix: 'List the scopes of the resource in `scopes_supported`: clients without a scope in the challenge use them.',
  });
  const methods = res.json.bearer_methods_supported;
  if (Array.isArray(methods) && methods.includes('query')) {
    ctx.report({
      id: 'prm-bearer-methods',
      status: 'fail',
      section: 'MCP Authorization §Token Requirements; RFC 6750 §2.3',
      title: 'the PRM offers tokens in the query string (bearer_methods_supported: query)',
      ...evidence(res),
      fix: 'Accept tokens only in the Authorization header; drop "query" from bearer_methods_supported.',
    });
  }
}
