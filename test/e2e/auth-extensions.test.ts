import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertAuthExtensions, mcpRequest } from '@mcp-auth-kit/testing';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';

/**
 * The demo MCP server advertises the authorization extensions our AS supports in `server/discover`
 * (spec/extensions/auth-overview.mdx; auth-oauth-client-credentials.mdx "Advertise support"):
 * the client credentials extension always (our AS has it), enterprise-managed authorization when
 * configured (its `main.ts` sets it from ID_JAG_ISSUER). Read with the testing kit's assertion
 * and, on both wires, by the MCP SDK v2 client.
 */
const CC = 'io.modelcontextprotocol/oauth-client-credentials';
const EMA = 'io.modelcontextprotocol/enterprise-managed-authorization';
const SECRET = 'extensions-machine-secret-0123456789';

const machine = {
  client_id: 'extensions-machine',
  client_secret: SECRET,
  grant_types: ['client_credentials'],
  token_endpoint_auth_method: 'client_secret_basic',
  response_types: [],
  redirect_uris: [],
  scope: 'notes:read',
};

async function machineToken(stack: DemoStack): Promise<string> {
  const res = await fetch(`${stack.issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`extensions-machine:${SECRET}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'notes:read', resource: stack.mcpUrl }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`);
  return body.access_token;
}

describe('e2e: the demo server advertises the authorization extensions of our AS', () => {
  let stack: DemoStack;
  let token: string;

  beforeAll(async () => {
    stack = await startDemoStack({
      asConfig: () => ({ clients: [machine] }),
    });
    token = await machineToken(stack);
  });
  afterAll(async () => stack?.close());

  it('server/discover (2026-07-28) lists the client credentials extension, and only it by default', async () => {
    const { response } = await assertAuthExtensions(stack.mcpUrl, [CC], { token });
    expect(response.body.result.capabilities.tools).toBeDefined();
  });

  it('server/discover is behind the token like every MCP request (401 without one)', async () => {
    const res = await mcpRequest(stack.mcpUrl, { protocolVersion: '2026-07-28', method: 'server/discover' });
    expect(res.status).toBe(401);
  });

  it.each([
    ['2026-07-28', { versionNegotiation: { mode: { pin: '2026-07-28' } } }],
    ['2025-11-25', {}],
  ])('the MCP SDK v2 client (ClientCredentialsProvider) reads it on the %s wire', async (_wire, options) => {
    const provider = new ClientCredentialsProvider({
      clientId: 'extensions-machine',
      clientSecret: SECRET,
      expectedIssuer: stack.issuer,
      scope: 'notes:read',
    });
    const client = new Client({ name: 'e2e-extensions', version: '1.0.0' }, options as never);
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider }));
    const extensions = client.getServerCapabilities()?.extensions;
    await client.close();
    expect(Object.keys(extensions ?? {})).toEqual([CC]);
  });

  it('with enterprise-managed authorization configured too (ID_JAG_ISSUER in main.ts), both are advertised', async () => {
    const enterprise = await startDemoStack({
      asConfig: () => ({ clients: [machine] }),
      authExtensions: { clientCredentials: true, enterpriseManagedAuthorization: true },
    });
    try {
      await assertAuthExtensions(enterprise.mcpUrl, [CC, EMA], { token: await machineToken(enterprise) });
    } finally {
      await enterprise.close();
    }
  });
});
