import { describe, expect, it } from 'vitest';
import { ERR, McpAuthClient } from '../src/index.js';
import { startHostileMcpServer } from './helpers/hostile-mcp-server.js';
import { closeAfterEach, refusal } from './helpers/scratch.js';

/**
 * Review r46 F1: the body of an MCP server's answer is bounded like an OAuth answer. A JSON
 * response is one JSON-RPC message (MCP Streamable HTTP transport, "Sending Messages to the
 * Server": `Content-Type: application/json` returns one object): at most `maxMessageBytes`, whole
 * within `requestTimeoutMs`. An SSE stream may stay open (Streamable HTTP §Listening for Messages),
 * so each event (WHATWG HTML §9.2.6: ended by an empty line) is bounded, not the stream. The CLI's
 * side is packages/cli/test/mcp-body-bounds.test.ts.
 */
const hostile = closeAfterEach(startHostileMcpServer);

const listTools = (id = 7) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
const post = { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } };

const MAX = 256 * 1024;

describe('McpAuthClient.fetch: MCP response bodies are bounded (review r46 F1)', () => {
  const client = () => new McpAuthClient({ clientName: 'bounds', requestTimeoutMs: 1500, maxMessageBytes: MAX });

  it('an endless JSON body is refused past maxMessageBytes; the client stopped reading', async () => {
    const s = await hostile('json-endless');
    const res = await client().fetch(s.url, { ...post, body: listTools() });
    const { err } = await refusal(res.text());
    expect(err.code).toBe(ERR.RESPONSE_TOO_LARGE);
    expect(err.message).toMatch(/the MCP server at http:\/\/127\.0\.0\.1:\d+ sent a response larger than 262144 bytes; refused/);
    await new Promise((r) => setTimeout(r, 200));
    // what the server could push: the bound plus what sockets and stream queues hold, far from endless
    expect(s.sent).toBeLessThan(MAX + 16 * 1024 * 1024);
  });

  it('one endless SSE event is refused past maxMessageBytes', async () => {
    const s = await hostile('sse-endless-event');
    const res = await client().fetch(s.url, { ...post, body: listTools() });
    const { err } = await refusal(res.text());
    expect(err.code).toBe(ERR.RESPONSE_TOO_LARGE);
    expect(err.message).toMatch(/sent a stream event larger than 262144 bytes; refused/);
    await new Promise((r) => setTimeout(r, 200));
    expect(s.sent).toBeLessThan(MAX + 16 * 1024 * 1024);
  });

  it('a JSON body trickled after its headers fails at requestTimeoutMs', async () => {
    const s = await hostile('json-trickle');
    const res = await client().fetch(s.url, { ...post, body: listTools() });
    const { err, ms } = await refusal(res.text());
    expect(err.code).toBe(ERR.SERVER_UNREACHABLE);
    expect(err.message).toMatch(/did not answer in time \(no complete answer within 1\.5 s\)/);
    expect(ms).toBeLessThan(4000);
  });

  it('an SSE stream has no overall bound: many events, together 4 × the bound, all arrive', async () => {
    const s = await hostile({ sseEvents: 64, eventBytes: MAX / 16 });
    const res = await client().fetch(s.url, { ...post, body: listTools() });
    const text = await res.text();
    expect(text.length).toBeGreaterThan(4 * MAX);
    expect(text).toContain('done');
  });

  it('a JSON body within the bound is read as before; one byte over is refused', async () => {
    const within = await hostile({ jsonBytes: MAX - 200 });
    expect((await (await client().fetch(within.url, { ...post, body: listTools() })).text()).length).toBeLessThanOrEqual(MAX);
    const over = await hostile({ jsonBytes: MAX });
    const { err } = await refusal((await client().fetch(over.url, { ...post, body: listTools() })).text());
    expect(err.code).toBe(ERR.RESPONSE_TOO_LARGE);
  });

  it('maxMessageBytes must be a finite number greater than 0; the default is 8 MiB', async () => {
    for (const bad of [0, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() => new McpAuthClient({ clientName: 'x', maxMessageBytes: bad })).toThrow(/"maxMessageBytes" must be a finite number/);
    }
  });
});
