import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { useDemoStack } from '../helpers/stack.js';
import { HeadlessSdkOAuthProvider } from '../helpers/sdk-oauth-provider.js';
import { inspectAccessToken } from '../helpers/jwt.js';

// The foundation flow driven by the MCP SDK v2 client (@modelcontextprotocol/client 2.4.0)
// against our AS and the demo MCP server, on both wires the demo server speaks.
const wires = [
  { name: '2025-11-25 (initialize)', options: {} },
  { name: '2026-07-28 (stateless)', options: { versionNegotiation: { mode: { pin: '2026-07-28' } } } },
] as const;

describe.each(wires)('e2e: MCP SDK v2 client, $name wire', ({ options }) => {
  const stack = useDemoStack();
  const provider = new HeadlessSdkOAuthProvider('e2e SDK v2 client');

  const connect = async () => {
    const client = new Client({ name: 'e2e-sdk-v2', version: '1.0.0' }, options as never);
    const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider as never });
    await client.connect(transport);
    return { client, transport };
  };

  it('401 → PRM → AS metadata → DCR → PKCE authorization with state, resource and iss → token', async () => {
    const client = new Client({ name: 'e2e-sdk-v2', version: '1.0.0' }, options as never);
    const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider as never });
    const first = client.connect(transport).then(() => client.listTools());
    await expect(first).rejects.toBeInstanceOf(UnauthorizedError);

    const request = provider.authorizationUrls[0]!;
    expect(request.searchParams.get('code_challenge_method')).toBe('S256');
    expect(request.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(request.searchParams.get('resource')).toBe(stack.mcpUrl);

    // RFC 9207: the authorization response names the issuer; state round-trips.
    const callback = provider.lastCallback(stack.issuer);
    await transport.finishAuth(callback);
    await client.close().catch(() => {});

    const { header, claims } = inspectAccessToken(provider.accessToken!);
    expect(header.typ).toBe('at+jwt');
    expect(claims.aud === stack.mcpUrl || (Array.isArray(claims.aud) && claims.aud.includes(stack.mcpUrl))).toBe(true);
    expect(claims.iss).toBe(stack.issuer);
  });

  it('tools/call whoami returns the subject and the granted scopes', async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    const text = JSON.stringify(result);
    const { claims } = inspectAccessToken(provider.accessToken!);
    expect(text).toContain(String(claims.sub));
    expect(text).toContain('notes:read');
    await client.close();
  });

  it('add_note needs notes:write: 403 insufficient_scope → step-up re-authorization → success', async () => {
    const authorizationsBefore = provider.authorizationUrls.length;
    const { client, transport } = await connect();
    const attempt = client.callTool({ name: 'add_note', arguments: { text: 'from the SDK v2 client' } });
    await expect(attempt).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrls.length).toBe(authorizationsBefore + 1);
    expect(provider.authorizationUrls.at(-1)!.searchParams.get('scope')).toContain('notes:write');
    await transport.finishAuth(provider.lastCallback(stack.issuer));
    await client.close().catch(() => {});

    const again = await connect();
    await again.client.callTool({ name: 'add_note', arguments: { text: 'from the SDK v2 client' } });
    const listed = await again.client.callTool({ name: 'list_notes', arguments: {} });
    expect(JSON.stringify(listed)).toContain('from the SDK v2 client');
    await again.client.close();
  });
});
