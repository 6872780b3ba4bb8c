import { beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpAuthClient, MemoryStore, createAuthFetch, enterpriseManagedAssertion, type McpAuthEvent } from '@mcp-auth-kit/client';
import { startTestIdp } from '@mcp-auth-kit/testing';
import { useDemoStack } from '../helpers/stack.js';
import { sharedForSuite } from '../helpers/suite.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const AGENT_SECRET = 'agent-secret-0123456789abcdef';

/**
 * MCP enterprise-managed authorization end to end (extension
 * `io.modelcontextprotocol/enterprise-managed-authorization`, profile §3–§5): the user's ID Token
 * from the test enterprise IdP → an ID-JAG (RFC 8693 exchange at the IdP, our client library) →
 * our AS's access token (RFC 7523 §2.1 grant) → an MCP call on the demo server. A tool that needs
 * a scope the organization does not grant gets 403; the client's step-up asks the IdP, which
 * refuses, and the client reports that refusal (step-up happens at the IdP, not at our AS).
 */
describe('e2e: enterprise-managed authorization (ID Token → ID-JAG → access token → MCP)', () => {
  const idp = sharedForSuite(() => startTestIdp({ clients: { 'mcp-host': { secret: 'idp-secret-0123456789', clientIdAt: {} } } }));
  const stack = useDemoStack(() => ({
    asConfig: () => ({
      clients: [
        {
          client_id: 'agent',
          client_secret: AGENT_SECRET,
          grant_types: [GRANT],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      idJag: { trustedIdps: [{ name: 'Acme', issuer: idp.issuer, jwksUri: idp.jwksUri, clients: ['agent'] }] },
    }),
  }));
  let auth: McpAuthClient;
  const events: McpAuthEvent[] = [];

  beforeAll(async () => {
    // The IdP knows the host as `mcp-host`; our AS knows it as `agent` (draft §5).
    idp.clients['mcp-host']!.clientIdAt = { [stack.issuer]: 'agent' };
    idp.allow({ sub: 'alice', audience: stack.issuer, resource: stack.mcpUrl, scopes: ['notes:read'] });
    auth = new McpAuthClient({
      clientName: 'enterprise host',
      store: new MemoryStore(),
      onEvent: (e) => events.push(e),
      jwtBearer: {
        client_id: 'agent',
        client_secret: AGENT_SECRET,
        issuer: stack.issuer,
        assertion: enterpriseManagedAssertion({
          idpTokenEndpoint: idp.tokenEndpoint,
          idpClientId: 'mcp-host',
          idpClientSecret: 'idp-secret-0123456789',
          idToken: () => idp.idToken({ sub: 'alice', clientId: 'mcp-host', email: 'alice@acme.example', email_verified: true }),
          allowInsecureRequests: true,
        }),
      },
    });
  });

  const connect = async () => {
    const client = new Client({ name: 'e2e-enterprise', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { fetch: createAuthFetch(auth) }));
    return client;
  };

  it('the ID-JAG buys an access token for the MCP server and the call succeeds, with no browser', async () => {
    const client = await connect();
    const listed = await client.callTool({ name: 'list_notes', arguments: {} });
    expect(listed.isError).not.toBe(true);
    // The IdP got an RFC 8693 exchange for our issuer and the MCP server (profile §4).
    const exchange = idp.requests.at(-1)!;
    expect(exchange.get('requested_token_type')).toBe('urn:ietf:params:oauth:token-type:id-jag');
    expect(exchange.get('audience')).toBe(stack.issuer);
    expect(exchange.get('resource')).toBe(stack.mcpUrl);
    const authorized = events.find((e) => e.type === 'authorized');
    expect(authorized).toMatchObject({ issuer: stack.issuer, resource: stack.mcpUrl, scope: 'notes:read' });
    const whoami = await client.callTool({ name: 'whoami', arguments: {} });
    const text = JSON.stringify(whoami.content);
    expect(text).toContain('agent');
    await client.close();
  });

  it('a tool beyond the granted scope: 403, step-up asks the IdP, the IdP refuses, the client says so', async () => {
    const client = await connect();
    const attempt = client.callTool({ name: 'add_note', arguments: { text: 'not allowed by the organization' } });
    await expect(attempt).rejects.toThrow(/enterprise IdP refused the ID-JAG token exchange \(HTTP 400, invalid_scope: .*notes:write/);
    expect(events.some((e) => e.type === 'step_up' && e.scope?.includes('notes:write'))).toBe(true);
    expect(idp.requests.at(-1)?.get('scope')).toContain('notes:write');
    await client.close().catch(() => {});
  });

  it('once the organization grants the scope, the same step-up succeeds (the IdP decides)', async () => {
    idp.allow({ sub: 'alice', audience: stack.issuer, resource: stack.mcpUrl, scopes: ['notes:read', 'notes:write'] });
    const client = await connect();
    const added = await client.callTool({ name: 'add_note', arguments: { text: 'allowed now' } });
    expect(added.isError).not.toBe(true);
    expect(events.filter((e) => e.type === 'authorized').at(-1)).toMatchObject({ scope: 'notes:read notes:write' });
    await client.close();
  });
});
