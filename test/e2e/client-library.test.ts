import { beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpAuthClient, MemoryStore, createAuthFetch } from '@mcp-auth-kit/client';
import { useDemoStack } from '../helpers/stack.js';
import { HeadlessBrowser } from '@mcp-auth-kit/test-utils';
import { inspectAccessToken } from '../helpers/jwt.js';
import { isLoopbackCallback } from '../helpers/loopback.js';

// The foundation flow driven by our own client library against our AS and the demo server:
// the library does discovery, DCR, PKCE, state/iss checks, token, step-up; the headless user
// agent only plays the browser and delivers the callback to the library's loopback listener.
describe('e2e: @mcp-auth-kit/client', () => {
  const stack = useDemoStack();
  let store: MemoryStore;
  let auth: McpAuthClient;
  const opened: URL[] = [];
  const callbacks: URL[] = [];

  beforeAll(() => {
    store = new MemoryStore();
    const ua = new HeadlessBrowser();
    auth = new McpAuthClient({
      clientName: 'e2e client library',
      store,
      openAuthorizationUrl: async (url) => {
        opened.push(url);
        callbacks.push(await ua.followToCallback(url, isLoopbackCallback, { deliver: true }));
      },
    });
  });

  const connect = async (options: object = {}) => {
    const client = new Client({ name: 'e2e-kit', version: '1.0.0' }, options as never);
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { fetch: createAuthFetch(auth) }));
    return client;
  };

  it('first 401 → discovery → DCR → PKCE + state + resource → callback with iss → JWT for the resource → whoami', async () => {
    const client = await connect();
    const whoami = await client.callTool({ name: 'whoami', arguments: {} });
    await client.close();

    expect(opened).toHaveLength(1);
    const request = opened[0]!;
    expect(request.searchParams.get('code_challenge_method')).toBe('S256');
    expect(request.searchParams.get('resource')).toBe(stack.mcpUrl);
    expect(request.searchParams.get('scope')).toContain('notes:read');
    expect(request.searchParams.get('state')).toBeTruthy();
    expect(callbacks[0]!.searchParams.get('iss')).toBe(stack.issuer);
    expect(callbacks[0]!.searchParams.get('state')).toBe(request.searchParams.get('state'));

    const tokens = await auth.getTokens(stack.mcpUrl);
    const { header, claims } = inspectAccessToken(tokens!.access_token);
    expect(header.typ).toBe('at+jwt');
    expect(claims.aud === stack.mcpUrl || (Array.isArray(claims.aud) && claims.aud.includes(stack.mcpUrl))).toBe(true);
    expect(JSON.stringify(whoami)).toContain(String(claims.sub));
  });

  it('2026-07-28 stateless wire with the stored token: no new authorization', async () => {
    const client = await connect({ versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['whoami', 'list_notes', 'add_note']));
    await client.close();
    expect(opened).toHaveLength(1);
  });

  it('step-up: add_note gets 403 insufficient_scope, the library re-authorizes with the union of scopes and retries', async () => {
    const client = await connect();
    await client.callTool({ name: 'add_note', arguments: { text: 'written through the kit client' } });
    const listed = await client.callTool({ name: 'list_notes', arguments: {} });
    await client.close();
    expect(JSON.stringify(listed)).toContain('written through the kit client');
    expect(opened).toHaveLength(2);
    const scopes = opened[1]!.searchParams.get('scope')!.split(' ');
    expect(scopes).toEqual(expect.arrayContaining(['notes:read', 'notes:write']));
  });
});
