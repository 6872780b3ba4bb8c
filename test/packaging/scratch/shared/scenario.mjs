// The user's test, shared by the vitest file and the node:test file: the MCP server of this
// project (./server.mjs) behind @mcp-auth-kit/resource-server, against the testing kit's real
// authorization server. node:assert works under both runners (the kit throws AssertionError too).
import assert from 'node:assert/strict';
import {
  assertAuthorized,
  assertInsufficientScope,
  assertInvalidToken,
  assertUnauthorized,
  callTool,
  startLoopbackServer,
  startTestAuthorizationServer,
} from '@mcp-auth-kit/testing';
import { createApp } from './server.mjs';

export async function startScenario() {
  const mcp = await startLoopbackServer(); // the resource URI needs the port first
  const resource = `${mcp.origin}/mcp`;
  const as = await startTestAuthorizationServer({
    resources: { [resource]: ['notes:read', 'notes:write'], 'http://127.0.0.1:1/other': ['notes:read'] },
    users: ['alice'],
  });
  const server = createApp({ issuer: as.issuer, resource });
  mcp.handle(server.app);
  return {
    mcp,
    as,
    resource,
    async close() {
      await server.close();
      await mcp.close();
      await as.close();
    },
  };
}

export const CASES = {
  '401 without a token: challenge with resource_metadata and scope': async ({ mcp, resource }) => {
    assertUnauthorized(await callTool(resource, { name: 'whoami' }), {
      scopes: ['notes:read'],
      resourceMetadata: `${mcp.origin}/.well-known/oauth-protected-resource/mcp`,
    });
  },
  'a real token: the tool sees req.auth (subject, scopes)': async ({ as, resource }) => {
    const token = await as.issueAccessToken({ resource, scopes: ['notes:read'] });
    const res = await callTool(resource, { token, name: 'whoami' });
    assertAuthorized(res);
    assert.deepEqual(JSON.parse(res.body.result.content[0].text), { sub: 'alice', scopes: ['notes:read'] });
  },
  '403 insufficient_scope, step-up to notes:write, then add_note works': async ({ as, resource }) => {
    const read = await as.issueAccessToken({ resource, scopes: ['notes:read'] });
    const denied = await callTool(resource, { token: read, name: 'add_note', arguments: { text: 'hi' } });
    const { scopes } = assertInsufficientScope(denied, { scopes: ['notes:write'] });
    const write = await as.issueAccessToken({ resource, scopes });
    const res = await callTool(resource, { token: write, name: 'add_note', arguments: { text: 'hi' } });
    assertAuthorized(res);
    assert.equal(res.body.result.content[0].text, 'saved hi');
  },
  'a token for another resource: 401 invalid_token': async ({ as, resource }) => {
    const other = await as.issueAccessToken({ resource: 'http://127.0.0.1:1/other' });
    assertInvalidToken(await callTool(resource, { token: other, name: 'whoami' }));
  },
};
