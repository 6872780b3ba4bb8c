import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';

// What the foundation issue checks from outside, on an ephemeral copy of the demo stack.
describe('e2e: runtime contract of the demo stack', () => {
  let stack: DemoStack;
  beforeAll(async () => {
    stack = await startDemoStack();
  });
  afterAll(async () => stack?.close());

  it('RFC 8414: AS metadata names the exact issuer, S256 only, RFC 9207 iss support and a registration endpoint', async () => {
    const res = await fetch(`${stack.issuer}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const metadata = (await res.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(stack.issuer);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(metadata.registration_endpoint).toMatch(new RegExp(`^${stack.issuer}/`));
  });

  it('RFC 9728: PRM at the path-based well-known URL names the resource and our AS', async () => {
    const mcp = new URL(stack.mcpUrl);
    const res = await fetch(`${mcp.origin}/.well-known/oauth-protected-resource${mcp.pathname}`);
    expect(res.status).toBe(200);
    const prm = (await res.json()) as Record<string, unknown>;
    expect(prm.resource).toBe(stack.mcpUrl);
    expect(prm.authorization_servers).toEqual([stack.issuer]);
  });

  it('RFC 6750 §3.1 / RFC 9728 §5.1: an unauthenticated POST /mcp gets 401 with resource_metadata and no error', async () => {
    const res = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer /);
    const mcp = new URL(stack.mcpUrl);
    expect(challenge).toContain(`resource_metadata="${mcp.origin}/.well-known/oauth-protected-resource${mcp.pathname}"`);
    expect(challenge).not.toMatch(/error=/);
  });
});
