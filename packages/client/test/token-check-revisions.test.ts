// checkAccess (`status --check`) speaks the server's revision (issue 42): the 2026-07-28
// `server/discover` (changelog item 3: servers MUST implement it; transport §Request Metadata
// headers) and, from a server that refuses that revision (400 / 404), the 2025-11-25 `initialize`.
// A 400 says nothing about the token: it is never "valid". Each server speaks one revision only.
import { describe, expect, it } from 'vitest';
import { CLIENT_CAPABILITIES_META_KEY, OAUTH_CLIENT_CREDENTIALS_EXTENSION } from '@mcp-auth-kit/protocol';
import { McpAuthClient } from '../src/index.js';
import { startFakeAs, type FakeAs } from './helpers/fake-servers.js';
import { fakePairs } from './helpers/fake-pair.js';
import { startRecordingMcpServer, type Wires } from './helpers/recording-mcp-server.js';

const { cleanups } = fakePairs();

async function loggedIn(wires: Wires) {
  const as: FakeAs = await startFakeAs();
  const mcp = await startRecordingMcpServer(as, wires);
  cleanups.push(as, mcp);
  const client = new McpAuthClient({ clientName: 'check', clientCredentials: { client_id: 'svc', client_secret: 's', issuer: as.issuer } });
  await client.authorize(mcp.mcpUrl);
  mcp.received.length = 0;
  mcp.statuses.length = 0;
  return { as, mcp, client };
}

const methods = (received: unknown[]) => received.map((m) => (m as { method?: string }).method);

describe('status --check against a server that speaks only 2026-07-28', () => {
  it('is valid through server/discover (with the version and method headers), never through initialize', async () => {
    const { mcp, client } = await loggedIn('2026-07-28');
    expect(await client.checkAccess(mcp.mcpUrl)).toMatchObject({ result: 'valid', status: 200, protocolVersion: '2026-07-28' });
    expect(methods(mcp.received)).toEqual(['server/discover']);
    // a request of this client: it declares the extension it uses
    const meta = (mcp.received[0] as { params: { _meta: Record<string, { extensions?: object }> } }).params._meta;
    expect(meta[CLIENT_CAPABILITIES_META_KEY]?.extensions).toEqual({ [OAUTH_CLIENT_CREDENTIALS_EXTENSION]: {} });
  });

  it('a revoked token is "revoked" (401), not valid', async () => {
    const { as, mcp, client } = await loggedIn('2026-07-28');
    as.tokens.clear();
    expect(await client.checkAccess(mcp.mcpUrl)).toMatchObject({ result: 'revoked', status: 401 });
  });

  it('the old bug: a 400 to the 2025 initialize no longer reads as valid', async () => {
    const { mcp, client } = await loggedIn('2026-07-28');
    // the 2026-only server refuses initialize with 400 (UnsupportedProtocolVersion)
    const res = await fetch(mcp.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${(await client.getTokens(mcp.mcpUrl))!.access_token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(res.status).toBe(400);
    await res.body?.cancel();
    expect((await client.checkAccess(mcp.mcpUrl)).result).toBe('valid'); // through server/discover
  });
});

describe('status --check against a server that speaks only 2025-11-25', () => {
  it('falls back to initialize after the server refuses server/discover, and is valid', async () => {
    const { mcp, client } = await loggedIn('2025-11-25');
    expect(await client.checkAccess(mcp.mcpUrl)).toMatchObject({ result: 'valid', status: 200, protocolVersion: '2025-11-25' });
    expect(methods(mcp.received)).toEqual(['server/discover', 'initialize']);
    expect(mcp.statuses[0]).toBeGreaterThanOrEqual(400);
  });

  it('a revoked token is refused at the first probe already', async () => {
    const { as, mcp, client } = await loggedIn('2025-11-25');
    as.tokens.clear();
    expect(await client.checkAccess(mcp.mcpUrl)).toMatchObject({ result: 'revoked', status: 401 });
    expect(mcp.received).toHaveLength(0);
  });
});

describe('a server that refuses both revisions', () => {
  it('is "unknown" with the status it answered, never "valid"', async () => {
    const { mcp, client } = await loggedIn('2026-07-28');
    const refusing = new McpAuthClient({
      clientName: 'check',
      store: client.store,
      // every probe answered 400, as a server speaking neither revision would
      fetch: async (input, init) =>
        String(input instanceof Request ? input.url : input) === mcp.mcpUrl
          ? new Response('{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported"}}', { status: 400 })
          : fetch(input, init),
    });
    expect(await refusing.checkAccess(mcp.mcpUrl)).toMatchObject({ result: 'unknown', status: 400 });
  });
});
