#!/usr/bin/env node
// Conformance client for @modelcontextprotocol/conformance client scenarios.
// It only wires @mcp-auth-kit/client (built dist) to the scenario: the server URL is the last
// argument, optional credentials come from MCP_CONFORMANCE_CONTEXT. No per-scenario OAuth logic.
import { McpAuthClient, MemoryStore, createAuthFetch, enterpriseManagedAssertion } from '@mcp-auth-kit/client';
import { discoverProtectedResource } from '@mcp-auth-kit/client/core';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';

const serverUrl = process.argv[process.argv.length - 1];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const protocolVersion = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;

/** Headless browser: follow the AS redirects to our loopback listener and deliver the callback. */
async function openAuthorizationUrl(url) {
  const isCallback = (target) => target.hostname === '127.0.0.1' && target.pathname === '/callback';
  await new HeadlessBrowser().followToCallback(url, isCallback, { deliver: true, maxHops: 5 });
}

const options = {
  clientName: 'mcp-auth-kit conformance client',
  store: new MemoryStore(),
  clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  openAuthorizationUrl,
  authorizationTimeoutMs: 20_000,
  // A DPoP-capable host: sender-constrain tokens whenever the AS offers DPoP (the library default,
  // 'auto', also waits for the MCP server's PRM to announce DPoP).
  dpop: 'always',
  // Also talk to MCP 2025-03-26 servers (no PRM: the server origin is the AS).
  legacyDiscovery: true,
  onEvent: (e) => console.error('[auth]', e.type, e.type === 'authorization_url' ? '' : JSON.stringify(e)),
};
// Credentials the scenario hands over: an enterprise IdP → ID-JAG + JWT bearer grant; a workload
// JWT → JWT bearer grant; a private key or secret without issuer → client credentials grant;
// a secret with an issuer → pre-registered client for that AS.
// The library binds machine credentials to one AS issuer (MCP Authorization Server Binding). The
// extension scenarios name none, so this harness, standing in for the operator who would configure
// it, pins the AS the scenario's server names (trust on first use: acceptable for a test server
// the harness itself started, never for an arbitrary MCP server).
async function pinnedIssuer() {
  if (context.issuer) return context.issuer;
  const { metadata } = await discoverProtectedResource(serverUrl, { fetch: (i, init) => fetch(i, init) });
  return metadata.authorization_servers[0];
}

if (context.idp_token_endpoint) {
  options.jwtBearer = {
    client_id: context.client_id,
    client_secret: context.client_secret,
    issuer: await pinnedIssuer(),
    assertion: enterpriseManagedAssertion({
      idpTokenEndpoint: context.idp_token_endpoint,
      idpClientId: context.idp_client_id,
      idToken: context.idp_id_token,
    }),
  };
} else if (context.valid_jwt) {
  options.jwtBearer = { client_id: context.client_id, issuer: await pinnedIssuer(), assertion: async () => context.valid_jwt };
} else if (context.private_key_pem) {
  options.clientCredentials = {
    client_id: context.client_id,
    token_endpoint_auth_method: 'private_key_jwt',
    privateKey: { key: context.private_key_pem, alg: context.signing_algorithm ?? 'ES256' },
    issuer: await pinnedIssuer(),
  };
} else if (context.client_id && context.client_secret && context.issuer) {
  options.preRegistered = [{ issuer: context.issuer, client_id: context.client_id, client_secret: context.client_secret }];
} else if (context.client_id && context.client_secret) {
  options.clientCredentials = { client_id: context.client_id, client_secret: context.client_secret, issuer: await pinnedIssuer() };
}

const auth = new McpAuthClient(options);
const mcp = new Client(
  { name: 'mcp-auth-kit-conformance', version: '0.1.0' },
  // Dated revisions through 2025-11-25 use the initialize handshake; 2026-07-28+ is stateless.
  protocolVersion && protocolVersion >= '2026-07-28' ? { versionNegotiation: { mode: { pin: protocolVersion } } } : {},
);
const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: createAuthFetch(auth) });
try {
  await mcp.connect(transport);
  const { tools } = await mcp.listTools();
  console.error('[mcp] tools:', tools.map((t) => t.name).join(', '));
  if (tools.some((t) => t.name === 'test-tool')) await mcp.callTool({ name: 'test-tool', arguments: {} });
  await mcp.close();
  process.exit(0);
} catch (err) {
  console.error('[mcp] failed:', err?.code ?? '', err?.message ?? err);
  await mcp.close().catch(() => {});
  process.exit(1);
}
