import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { useDemoStack } from '../helpers/stack.js';
import { HeadlessSdkOAuthProvider } from '../helpers/sdk-oauth-provider.js';
import { inspectAccessToken } from '../helpers/jwt.js';

// The foundation flow driven by the widely installed MCP SDK v1 client
// (@modelcontextprotocol/sdk 1.32.2, 2025-11-25 wire). It checks neither `state` nor `iss`
// (its finishAuth takes the code alone), so the test does, before handing the code over.
describe('e2e: MCP SDK v1 client', () => {
  const stack = useDemoStack();
  const provider = new HeadlessSdkOAuthProvider('e2e SDK v1 client');

  it('401 → discovery → DCR → PKCE authorization → token with aud = resource → whoami', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider as never });
    const client = new Client({ name: 'e2e-sdk-v1', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);

    const request = provider.authorizationUrls[0]!;
    expect(request.searchParams.get('code_challenge_method')).toBe('S256');
    expect(request.searchParams.get('resource')).toBe(stack.mcpUrl);
    const callback = provider.lastCallback(stack.issuer);
    await transport.finishAuth(callback.get('code')!);

    const { header, claims } = inspectAccessToken(provider.accessToken!);
    expect(header.typ).toBe('at+jwt');
    expect(claims.aud === stack.mcpUrl || (Array.isArray(claims.aud) && claims.aud.includes(stack.mcpUrl))).toBe(true);

    const authed = new Client({ name: 'e2e-sdk-v1', version: '1.0.0' });
    await authed.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider as never }));
    const whoami = await authed.callTool({ name: 'whoami', arguments: {} });
    expect(JSON.stringify(whoami)).toContain(String(claims.sub));
    const tools = await authed.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['whoami', 'list_notes', 'add_note']));
    await authed.close();
  });
});
