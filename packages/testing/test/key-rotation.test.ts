/** rotateKeys against a running resource server: the JWKS it cached goes stale and must be refreshed. */
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  assertAuthorized,
  callTool,
  startLoopbackServer,
  startTestAuthorizationServer,
  type TestAuthorizationServer,
} from '@mcp-auth-kit/testing';
import { createProtectedMcpServer } from '../../../examples/protected-mcp-server/src/server.js';

let as: TestAuthorizationServer;
let resource: string;
/** What beforeAll started, closed last first. */
const running: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  const listener = await startLoopbackServer();
  running.push(listener);
  resource = `${listener.origin}/mcp`;
  as = await startTestAuthorizationServer({ resources: { [resource]: ['notes:read'] }, cimd: false });
  running.push(as);
  const server = createProtectedMcpServer({ issuer: as.issuer, resource });
  running.push(server);
  listener.handle(server.app);
});
afterAll(async () => {
  while (running.length) await running.pop()!.close();
});

it('RFC 7517 key rotation: tokens signed before and after rotateKeys are both accepted by a running server', async () => {
  const before = await as.issueAccessToken();
  assertAuthorized(await callTool(resource, { token: before, name: 'whoami' })); // the server caches the JWKS now
  const { currentKid, previousKid } = await as.rotateKeys();
  const after = await as.issueAccessToken();
  expect(decodeProtectedHeader(after).kid).toBe(currentKid);
  expect(decodeProtectedHeader(before).kid).toBe(previousKid);
  assertAuthorized(await callTool(resource, { token: after, name: 'whoami' })); // unknown kid → JWKS refetch
  assertAuthorized(await callTool(resource, { token: before, name: 'whoami' })); // the old key is still published
});
