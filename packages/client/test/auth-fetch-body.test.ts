import { describe, expect, it } from 'vitest';
import { McpAuthClient, MemoryStore } from '../src/index.js';
import { fakePairs } from './helpers/fake-pair.js';
import type { FakeRs } from './helpers/fake-servers.js';
import { headlessBrowser } from './helpers/harness.js';

// The client sends a call's body once without a token, then again after authorization (MCP
// Authorization §Authorization Flow Steps: the request is retried with the access token). Each
// attempt must carry exactly the bytes and content type that fetch(url, init) would send.

const { pair } = fakePairs();

async function freshServer(): Promise<FakeRs> {
  const [, rs] = await pair();
  return rs;
}

const client = () =>
  new McpAuthClient({
    clientName: 'body test',
    store: new MemoryStore(),
    openAuthorizationUrl: headlessBrowser,
    authorizationTimeoutMs: 5000,
  });

/** What fetch itself would send for this input and init: the reference each attempt is compared with. */
async function reference(url: string, init: RequestInit): Promise<{ contentType: string | undefined; body: Buffer }> {
  const request = new Request(url, init);
  return { contentType: request.headers.get('content-type') ?? undefined, body: Buffer.from(await request.arrayBuffer()) };
}

async function expectSentAsFetchWould(makeInit: () => RequestInit) {
  const rs = await freshServer();
  const expected = await reference(rs.mcpUrl, makeInit());
  const res = await client().fetch(rs.mcpUrl, makeInit());
  expect(res.status).toBe(200);
  // the refused first attempt and the authorized retry
  expect(rs.seenTokens[0]).toBeUndefined();
  expect(rs.seenTokens.at(-1)).toMatch(/^at-/);
  expect(rs.seenRequests.length).toBeGreaterThanOrEqual(2);
  for (const seen of rs.seenRequests) {
    expect(seen.method).toBe('POST');
    expect(seen.contentType).toBe(expected.contentType);
    expect(seen.body.equals(expected.body)).toBe(true);
  }
}

describe('authorized fetch: the request body, identical on every attempt', () => {
  it('a JSON string, as the MCP SDK transports send it', async () => {
    await expectSentAsFetchWould(() => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'zoë', arguments: { text: '✓ 😀' } } }),
    }));
  });

  it('a string without a content type: UTF-8 and text/plain, as fetch sends it', async () => {
    await expectSentAsFetchWould(() => ({ method: 'POST', body: 'zoë ✓ 😀 \u2028 end' }));
  });

  it('a Uint8Array view into a larger buffer: only the view, copied when the call starts', async () => {
    const rs = await freshServer();
    const backing = new Uint8Array([9, 9, 1, 2, 3, 4, 9, 9]);
    const view = backing.subarray(2, 6);
    const call = client().fetch(rs.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: view });
    backing.fill(0); // the caller reuses its buffer while the call is under way
    expect((await call).status).toBe(200);
    expect(rs.seenRequests.length).toBeGreaterThanOrEqual(2);
    for (const seen of rs.seenRequests) expect([...seen.body]).toEqual([1, 2, 3, 4]);
  });

  it('an ArrayBuffer', async () => {
    await expectSentAsFetchWould(() => ({ method: 'POST', body: new Uint8Array([0, 255, 128, 10]).buffer }));
  });

  it('form data (URLSearchParams), a Blob with a type, and a stream: read from the request, as before', async () => {
    await expectSentAsFetchWould(() => ({ method: 'POST', body: new URLSearchParams({ a: 'b c', ü: '&' }) }));
    await expectSentAsFetchWould(() => ({ method: 'POST', body: new Blob(['{"x":1}'], { type: 'application/json' }) }));
    await expectSentAsFetchWould(
      () =>
        ({
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: new Blob(['{"streamed":', 'true}']).stream(),
          duplex: 'half',
        }) as RequestInit,
    );
  });

  it('a Request given as input carries its own body', async () => {
    const rs = await freshServer();
    const input = () =>
      new Request(rs.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"from":"request"}' });
    expect((await client().fetch(input())).status).toBe(200);
    expect(rs.seenRequests.length).toBeGreaterThanOrEqual(2);
    for (const seen of rs.seenRequests) {
      expect(seen.contentType).toBe('application/json');
      expect(seen.body.toString()).toBe('{"from":"request"}');
    }
  });

  it('a body in init replaces the body of a Request given as input, as fetch does', async () => {
    const rs = await freshServer();
    const input = new Request(rs.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"from":"request"}' });
    expect((await client().fetch(input, { body: '{"from":"init"}' })).status).toBe(200);
    for (const seen of rs.seenRequests) expect(seen.body.toString()).toBe('{"from":"init"}');
  });
});
