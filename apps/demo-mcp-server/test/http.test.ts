import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoServer, type DemoServer } from '../src/index.js';
import { startFakeAuthorizationServer, type FakeAuthorizationServer } from './helpers/fake-as.js';
import { bearer, legacyClient, LEGACY_VERSION, modernClient, MODERN_VERSION, post } from './helpers/mcp-wire.js';

// Through real HTTP on loopback: the demo server with the real resource-server middleware, and a
// stand-in AS (metadata + JWKS) that signs RFC 9068 access tokens.
let as: FakeAuthorizationServer;
let demo: DemoServer;
let prmUrl: string;
/** Out-of-band errors of the MCP layer (client rejections are reported there too). */
const reported: Error[] = [];

const TOOL_NAMES = ['add_note', 'list_notes', 'whoami'];

beforeAll(async () => {
  as = await startFakeAuthorizationServer();
  // Port 0: the default resource names the bound port; tokens are minted for it below.
  demo = await startDemoServer({ port: 0, host: '127.0.0.1', issuer: as.issuer, onError: (e) => reported.push(e) });
  const mcp = new URL(demo.resource);
  prmUrl = `${mcp.origin}/.well-known/oauth-protected-resource${mcp.pathname}`;
});

afterAll(async () => {
  await demo?.close();
  await as?.close();
});

function token(claims: Parameters<FakeAuthorizationServer['sign']>[0] = {}): Promise<string> {
  return as.sign({ aud: demo.resource, ...claims });
}

/** A plain `tools/list` request (no `_meta` envelope). */
const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

/** `tools/list` in the 2026-07-28 `_meta` envelope that names `version`. */
function modernToolsList(version: string, id = 1) {
  const meta = { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': {} };
  return { jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: meta } };
}

type WireClient = ReturnType<typeof legacyClient> | ReturnType<typeof modernClient>;

/** MCP Scope Challenge Handling: add_note with only notes:read → 403 insufficient_scope naming notes:write. */
async function expectWriteScopeChallenge(client: WireClient): Promise<void> {
  const res = await client.callTool('add_note', { text: 'nope' });
  expect(res.status).toBe(403);
  const challenge = res.headers.get('www-authenticate') ?? '';
  expect(challenge).toMatch(/error="insufficient_scope"/);
  expect(challenge).toMatch(/scope="[^"]*notes:write[^"]*"/);
  expect(challenge).toContain(`resource_metadata="${prmUrl}"`);
}

/** add_note with `text` succeeds; returns the texts list_notes shows then. */
async function addThenList(client: WireClient, text: string): Promise<string[]> {
  const added = await client.callTool('add_note', { text });
  expect(added.status).toBe(200);
  expect(added.body.result.structuredContent.note.text).toBe(text);
  const listed = await client.callTool('list_notes');
  return listed.body.result.structuredContent.notes.map((n: { text: string }) => n.text);
}

function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('protected resource', () => {
  it('RFC 9728 §5.1 / RFC 6750 §3.1: unauthenticated POST /mcp → 401 with resource_metadata and no error code', async () => {
    const res = await post(demo.url, TOOLS_LIST);
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${prmUrl}"`);
    expect(challenge).not.toMatch(/error=/);
  });

  it('MCP Scope Selection Strategy: the 401 challenge names the basic scope notes:read', async () => {
    const res = await post(demo.url, TOOLS_LIST);
    expect(res.headers.get('www-authenticate')).toMatch(/scope="notes:read"/);
  });

  it('RFC 9728 §3: PRM at the path-based well-known URL names the resource, the AS and scopes_supported', async () => {
    const res = await fetch(prmUrl);
    expect(res.status).toBe(200);
    const prm = (await res.json()) as Record<string, any>;
    expect(prm.resource).toBe(demo.resource);
    expect(prm.authorization_servers).toEqual([as.issuer]);
    expect(prm.scopes_supported).toContain('notes:read');
    expect(prm.resource_name).toBe('Demo notes');
  });

  it('RFC 9728 §3: PRM is also served at the root well-known URL', async () => {
    const res = await fetch(`${new URL(demo.resource).origin}/.well-known/oauth-protected-resource`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Record<string, unknown>).resource).toBe(demo.resource);
  });

  it('default resource is http://localhost:<bound port>/mcp and url points at it', () => {
    expect(demo.resource).toBe(`http://localhost:${demo.port}/mcp`);
    expect(demo.url).toBe(demo.resource);
  });

  it('RFC 8707 audience binding: a token for another resource → 401 invalid_token', async () => {
    const other = await as.sign({ aud: 'http://localhost:1/other' });
    const res = await post(demo.url, TOOLS_LIST, bearer(other));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('RFC 6750 §3.1: an expired token → 401 invalid_token', async () => {
    const expired = await token({ expiresIn: -120 });
    const res = await post(demo.url, TOOLS_LIST, bearer(expired));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('Streamable HTTP §Security: a foreign Origin → 403 (DNS rebinding)', async () => {
    const res = await post(demo.url, TOOLS_LIST, { ...bearer(await token()), origin: 'http://evil.example' });
    expect(res.status).toBe(403);
  });

  it('Streamable HTTP §Security: the same loopback server under another name is an allowed Origin, another port is not', async () => {
    const body = TOOLS_LIST;
    const headers = { ...bearer(await token()), 'mcp-protocol-version': LEGACY_VERSION };
    for (const origin of [`http://localhost:${demo.port}`, `http://127.0.0.1:${demo.port}`, `http://[::1]:${demo.port}`]) {
      expect((await post(demo.url, body, { ...headers, origin })).status).toBe(200);
    }
    expect((await post(demo.url, body, { ...headers, origin: `http://localhost:${demo.port + 1}` })).status).toBe(403);
    expect((await post(demo.url, body, { ...headers, origin: 'null' })).status).toBe(403);
  });

  it('Streamable HTTP §Security: a foreign Host header → 403 even without Origin (DNS rebinding)', async () => {
    const res = await rawRequest(demo.url, {
      method: 'POST',
      headers: {
        host: `evil.example:${demo.port}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${await token()}`,
      },
      body: JSON.stringify(TOOLS_LIST),
    });
    expect(res.status).toBe(403);
    expect(res.body).not.toContain('notes');
  });

  it('malformed JSON body → 400 with a JSON error, never a 500 or a stack', async () => {
    const res = await fetch(demo.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...bearer(await token()),
      },
      body: '{"jsonrpc":',
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const text = await res.text();
    expect(text).not.toMatch(/at .*\.js:\d+/);
  });

  it('/healthz answers without a token', async () => {
    const res = await fetch(`http://127.0.0.1:${demo.port}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('unknown paths → 404 JSON', async () => {
    const res = await fetch(`http://127.0.0.1:${demo.port}/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
  });
});

describe('2025-11-25 wire (initialize handshake, stateless: no Mcp-Session-Id)', () => {
  it('initialize → tools/list → tools/call whoami', async () => {
    const client = legacyClient(demo.url, await token({ sub: 'alice', client_id: 'client-a', scope: 'notes:read' }));
    const init = await client.initialize();
    expect(init.status).toBe(200);
    expect(init.body.result.protocolVersion).toBe(LEGACY_VERSION);
    expect(init.body.result.serverInfo.name).toBe('mcp-auth-kit-demo');
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect((await client.initialized()).status).toBe(202);

    const list = await client.request('tools/list');
    expect(list.status).toBe(200);
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).toEqual(TOOL_NAMES);

    const who = await client.callTool('whoami');
    expect(who.status).toBe(200);
    expect(who.body.result.structuredContent).toMatchObject({
      sub: 'alice',
      client_id: 'client-a',
      scopes: ['notes:read'],
      iss: as.issuer,
      resource: demo.resource,
    });
  });

  it('MCP Scope Challenge Handling: add_note with only notes:read → 403 insufficient_scope naming notes:write', async () => {
    await expectWriteScopeChallenge(legacyClient(demo.url, await token({ scope: 'notes:read' })));
  });

  it('with notes:write, add_note works and list_notes shows the note', async () => {
    const client = legacyClient(demo.url, await token({ sub: 'bob', scope: 'notes:read notes:write' }));
    expect(await addThenList(client, 'legacy wire note')).toContain('legacy wire note');
  });
});

describe('2026-07-28 wire (stateless: _meta envelope, Mcp-Method / Mcp-Name headers)', () => {
  it('server/discover advertises 2026-07-28 and the server identity', async () => {
    const client = modernClient(demo.url, await token());
    const res = await client.request('server/discover');
    expect(res.status).toBe(200);
    expect(res.body.result.supportedVersions).toContain(MODERN_VERSION);
    // A fixed tool set: no list-changed promise.
    expect(res.body.result.capabilities.tools).toEqual({ listChanged: false });
    expect(res.body.result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('mcp-auth-kit-demo');
  });

  it('tools/list is deterministic, complete and cacheable (resultType, ttlMs, cacheScope)', async () => {
    const client = modernClient(demo.url, await token());
    const first = await client.request('tools/list');
    const second = await client.request('tools/list');
    expect(first.status).toBe(200);
    expect(first.body.result.tools.map((t: { name: string }) => t.name)).toEqual(TOOL_NAMES);
    expect(second.body.result.tools).toEqual(first.body.result.tools);
    expect(first.body.result.resultType).toBe('complete');
    expect(first.body.result.cacheScope).toBe('private');
    expect(typeof first.body.result.ttlMs).toBe('number');
  });

  it('tools/call whoami returns sub, client_id and scopes from the token', async () => {
    const client = modernClient(demo.url, await token({ sub: 'carol', client_id: 'client-c', scope: 'notes:read notes:write' }));
    const res = await client.callTool('whoami');
    expect(res.status).toBe(200);
    expect(res.body.result.structuredContent).toMatchObject({
      sub: 'carol',
      client_id: 'client-c',
      scopes: ['notes:read', 'notes:write'],
    });
    expect(res.headers.get('mcp-session-id')).toBeNull();
  });

  it('Streamable HTTP §Server Validation: Mcp-Name that disagrees with the body → 400 HeaderMismatch (-32020)', async () => {
    const client = modernClient(demo.url, await token());
    const res = await client.callTool('list_notes', {}, 'whoami');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32020);
  });

  it('MCP Scope Challenge Handling: add_note with only notes:read → 403 insufficient_scope naming notes:write', async () => {
    await expectWriteScopeChallenge(modernClient(demo.url, await token({ scope: 'notes:read' })));
  });

  it('with notes:write, add_note works and list_notes shows the note', async () => {
    const client = modernClient(demo.url, await token({ sub: 'dave', scope: 'notes:read notes:write' }));
    expect(await addThenList(client, 'modern wire note')).toEqual(['modern wire note']);
  });

  it("notes are per subject: another user's list_notes does not show them", async () => {
    const writer = modernClient(demo.url, await token({ sub: 'erin', scope: 'notes:read notes:write' }));
    await writer.callTool('add_note', { text: 'erin secret' });
    const reader = modernClient(demo.url, await token({ sub: 'frank', scope: 'notes:read' }));
    const listed = await reader.callTool('list_notes');
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain('erin secret');
  });

  it('add_note with invalid arguments → a tool/protocol error, not a 500', async () => {
    const client = modernClient(demo.url, await token({ scope: 'notes:read notes:write' }));
    const res = await client.callTool('add_note', { text: '' });
    expect(res.status).toBeLessThan(500);
    const failed = res.body.error !== undefined || res.body.result?.isError === true;
    expect(failed).toBe(true);
  });

  it('2026-07-28 Backward Compatibility: GET /mcp with a valid token → 405', async () => {
    const res = await fetch(demo.url, {
      headers: { accept: 'text/event-stream', ...bearer(await token()), 'mcp-protocol-version': MODERN_VERSION },
    });
    expect(res.status).toBe(405);
  });

  it('Streamable HTTP §Protocol Version Header: an unsupported version → 400 UnsupportedProtocolVersion (-32022) listing 2026-07-28', async () => {
    const res = await post(demo.url, modernToolsList('2099-01-01'), {
      ...bearer(await token()),
      'mcp-protocol-version': '2099-01-01',
      'mcp-method': 'tools/list',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32022);
    expect(JSON.stringify(res.body.error.data)).toContain(MODERN_VERSION);
  });

  it.each([
    [
      'Streamable HTTP §Server Validation: MCP-Protocol-Version header disagreeing with _meta → 400 -32020',
      { 'mcp-protocol-version': LEGACY_VERSION, 'mcp-method': 'tools/list' },
    ],
    ['Streamable HTTP §Standard Request Headers: a missing Mcp-Method → 400 -32020', { 'mcp-protocol-version': MODERN_VERSION }],
  ])('%s', async (_name, headers) => {
    const res = await post(demo.url, modernToolsList(MODERN_VERSION), { ...bearer(await token()), ...headers });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32020);
  });

  it('2026-07-28 Backward Compatibility: a client-sent Mcp-Session-Id is ignored, none is minted', async () => {
    const client = modernClient(demo.url, await token());
    const res = await post(demo.url, modernToolsList(MODERN_VERSION, 9), {
      ...bearer(await token()),
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'tools/list',
      'mcp-session-id': 'stale-session',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect((await client.request('tools/list')).status).toBe(200);
  });

  it('2026-07-28 Backward Compatibility: DELETE /mcp with a valid token → 405', async () => {
    const res = await fetch(demo.url, { method: 'DELETE', headers: { ...bearer(await token()), 'mcp-session-id': 'x' } });
    expect(res.status).toBe(405);
  });
});

describe('bearer token handling at the demo endpoint', () => {
  it('MCP Token Requirements: a token in the query string is refused, never accepted', async () => {
    const url = `${demo.url}?access_token=${encodeURIComponent(await token())}`;
    const res = await post(url, TOOLS_LIST, { 'mcp-protocol-version': LEGACY_VERSION });
    expect([400, 401]).toContain(res.status);
    expect(JSON.stringify(res.body ?? {})).not.toContain('tools');
  });

  it('RFC 9068 §4: a token signed by a key the issuer does not publish → 401 invalid_token', async () => {
    const stranger = await startFakeAuthorizationServer();
    try {
      const forged = await stranger.sign({ aud: demo.resource, iss: as.issuer });
      const res = await post(demo.url, TOOLS_LIST, bearer(forged));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    } finally {
      await stranger.close();
    }
  });

  it('2025-11-25 Protocol Version Header: an unsupported MCP-Protocol-Version on the legacy wire → 400', async () => {
    const res = await post(demo.url, TOOLS_LIST, { ...bearer(await token()), 'mcp-protocol-version': '1999-01-01' });
    expect(res.status).toBe(400);
  });
});

describe('server health after all of the above', () => {
  it('the MCP layer reported only client-side rejections, never an internal error', () => {
    const internal = reported.filter((error) => !/^(Rejected inbound request|Unsupported protocol version)/.test(error.message));
    expect(internal).toEqual([]);
    expect(reported.length).toBeGreaterThan(0);
  });
});
