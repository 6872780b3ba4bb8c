// Extension negotiation (spec/extensions/auth-overview.mdx §Specification; MCP 2026-07-28 changelog
// items 1-2): a client declares the authorization extensions it uses in each request's
// `_meta["io.modelcontextprotocol/clientCapabilities"].extensions`, on the 2026-07-28 wire only.
// Checked through the MCP SDK v2 client and our fetch, against a real SDK v2 server on loopback
// that records what arrives.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  CLIENT_CAPABILITIES_META_KEY,
  ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION,
  OAUTH_CLIENT_CREDENTIALS_EXTENSION,
} from '@mcp-auth-kit/protocol';
import { describe, expect, it } from 'vitest';
import { createAuthFetch, enterpriseManagedAssertion, McpAuthClient, type McpAuthClientOptions } from '../src/index.js';
import { declareExtensions } from '../src/client/extension-declarations.js';
import { startFakeAs } from './helpers/fake-servers.js';
import { fakePairs } from './helpers/fake-pair.js';
import { startIdJagEndpoint } from './helpers/fake-idp.js';
import { headlessBrowser } from './helpers/harness.js';
import { startRecordingMcpServer } from './helpers/recording-mcp-server.js';

const { cleanups, closeAfter } = fakePairs();
type Wire = '2025-11-25' | '2026-07-28';

/** Lists and calls the tools with the SDK v2 client over our fetch; returns the JSON-RPC requests the server received. */
async function session(wire: Wire, options: (issuer: string) => Omit<McpAuthClientOptions, 'clientName'>) {
  const as = await startFakeAs();
  const mcp = await startRecordingMcpServer(as);
  cleanups.push(as, mcp);
  const auth = new McpAuthClient({ clientName: 'declarations', ...options(as.issuer) });
  const client = new Client(
    { name: 'declarations', version: '1.0.0' },
    wire === '2026-07-28' ? { versionNegotiation: { mode: { pin: wire } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(mcp.mcpUrl), { fetch: createAuthFetch(auth) }));
  cleanups.push(client);
  await client.listTools();
  expect(await client.callTool({ name: 'ping', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'pong' }] });
  const requests = mcp.received.flatMap((m) => (Array.isArray(m) ? m : [m])) as JsonRpc[];
  return { requests: requests.filter((m) => m.method !== undefined && m.id !== undefined), as };
}

interface JsonRpc {
  id?: unknown;
  method?: string;
  params?: { _meta?: Record<string, { extensions?: Record<string, unknown> } | string> };
}

function declared(request: JsonRpc): string[] {
  const caps = request.params?._meta?.[CLIENT_CAPABILITIES_META_KEY];
  return typeof caps === 'object' && caps.extensions ? Object.keys(caps.extensions) : [];
}

const machine = (issuer: string) => ({ clientCredentials: { client_id: 'svc', client_secret: 'sec', issuer } });

describe('client credentials extension: declared on the 2026-07-28 wire (oauth-client-credentials §Declare support)', () => {
  it('every request (tools/list, tools/call) carries io.modelcontextprotocol/oauth-client-credentials', async () => {
    const { requests } = await session('2026-07-28', machine);
    expect(requests.map((r) => r.method)).toEqual(expect.arrayContaining(['tools/list', 'tools/call']));
    for (const r of requests) {
      expect(declared(r)).toEqual([OAUTH_CLIENT_CREDENTIALS_EXTENSION]);
      // the SDK's own per-request fields stay as it sent them
      expect(r.params?._meta?.['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    }
  });

  it('nothing is added on the 2025-11-25 wire: no _meta declaration, initialize capabilities untouched', async () => {
    const { requests } = await session('2025-11-25', machine);
    expect(requests.map((r) => r.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
    for (const r of requests) expect(JSON.stringify(r)).not.toContain('io.modelcontextprotocol/oauth-client-credentials');
  });

  it('the RFC 7523 §2.1 assertion grant declares the same extension', async () => {
    const { generateKeyPair, exportPKCS8 } = await import('jose');
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const pem = await exportPKCS8(privateKey);
    const { requests } = await session('2026-07-28', (issuer) => ({
      clientCredentials: { client_id: 'svc', issuer, grant: 'jwt_bearer', privateKey: { key: pem, alg: 'ES256' } },
    }));
    for (const r of requests) expect(declared(r)).toEqual([OAUTH_CLIENT_CREDENTIALS_EXTENSION]);
  });
});

describe('enterprise-managed authorization: declared on the 2026-07-28 wire (enterprise-managed §For MCP clients 1)', () => {
  it('a client whose JWT bearer assertion is an ID-JAG declares io.modelcontextprotocol/enterprise-managed-authorization only', async () => {
    const idp = closeAfter(await startIdJagEndpoint());
    const { requests } = await session('2026-07-28', (issuer) => ({
      jwtBearer: {
        client_id: 'mcp-client',
        issuer,
        assertion: enterpriseManagedAssertion({ idpTokenEndpoint: `${idp.url}/token`, idpClientId: 'idp', idToken: 'id.token' }),
      },
    }));
    for (const r of requests) expect(declared(r)).toEqual([ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION]);
  });
});

describe('extensions not in use are never declared ("opt-in and never active by default")', () => {
  it('the interactive flow declares none', async () => {
    const { requests } = await session('2026-07-28', () => ({ openAuthorizationUrl: headlessBrowser }));
    expect(requests.length).toBeGreaterThan(0);
    for (const r of requests) expect(declared(r)).toEqual([]);
  });

  it('a workload-identity JWT bearer grant declares none, unless its `extension` names one', async () => {
    const plain = await session('2026-07-28', (issuer) => ({ jwtBearer: { client_id: 'w', issuer, assertion: async () => 'wif.jwt' } }));
    for (const r of plain.requests) expect(declared(r)).toEqual([]);
    const named = await session('2026-07-28', (issuer) => ({
      jwtBearer: { client_id: 'w', issuer, assertion: async () => 'wif.jwt', extension: OAUTH_CLIENT_CREDENTIALS_EXTENSION },
    }));
    for (const r of named.requests) expect(declared(r)).toEqual([OAUTH_CLIENT_CREDENTIALS_EXTENSION]);
  });
});

describe('declareExtensions()', () => {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
  const ext = [OAUTH_CLIENT_CREDENTIALS_EXTENSION] as const;

  it('keeps what the caller declared (other capabilities, an extension settings object) and adds the rest', () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/list',
      params: {
        _meta: {
          ...meta,
          [CLIENT_CAPABILITIES_META_KEY]: {
            sampling: {},
            extensions: { [OAUTH_CLIENT_CREDENTIALS_EXTENSION]: { v: 1 }, 'x.example/other': {} },
          },
        },
      },
    });
    const out = JSON.parse(declareExtensions(body, [OAUTH_CLIENT_CREDENTIALS_EXTENSION, ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION]));
    expect(out.params._meta[CLIENT_CAPABILITIES_META_KEY]).toEqual({
      sampling: {},
      extensions: {
        [OAUTH_CLIENT_CREDENTIALS_EXTENSION]: { v: 1 },
        'x.example/other': {},
        [ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION]: {},
      },
    });
  });

  it('declares in each request of a batch; notifications, responses, 2025 messages and non-JSON go out byte for byte', () => {
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: meta, requestId: 1 } },
    ]);
    const [request, notification] = JSON.parse(declareExtensions(batch, ext));
    expect(Object.keys(request.params._meta[CLIENT_CAPABILITIES_META_KEY].extensions)).toEqual([...ext]);
    expect(notification.params._meta[CLIENT_CAPABILITIES_META_KEY]).toBeUndefined();
    for (const unchanged of [
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: { _meta: meta } }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }),
      'not json io.modelcontextprotocol/protocolVersion',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 5 } } }),
    ]) {
      expect(declareExtensions(unchanged, ext)).toBe(unchanged);
    }
  });
});
