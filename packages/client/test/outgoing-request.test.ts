/**
 * An authorized call's request without `new Request` (src/client/outgoing-request.ts): for every
 * input, what goes on the wire is what `fetch(input, init)` itself sends (Fetch §5.4 "Request
 * class": URL, method normalization, headers, body and its content type), and an input that
 * `new Request` refuses is refused with the same `TypeError`.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outgoingRequest } from '../src/client/outgoing-request.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let base: string;
let seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('latin1') });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** What the server received for one fetch. */
async function received(send: () => Promise<Response>): Promise<Seen> {
  seen = [];
  await (await send()).text();
  expect(seen).toHaveLength(1);
  const [one] = seen;
  // connection-level headers differ with the pool, not with the request
  const { connection: _c, 'keep-alive': _k, ...headers } = one!.headers;
  return { ...one!, headers };
}

async function sentAsIs(input: string | URL, init: RequestInit | undefined): Promise<Seen> {
  const o = outgoingRequest(input, init);
  const body = await o.body();
  return received(() =>
    fetch(o.url, {
      method: o.method,
      headers: o.headers,
      body: body ?? null,
      ...(o.signal !== undefined && { signal: o.signal }),
      ...(o.redirect !== undefined && { redirect: o.redirect }),
    }),
  );
}

describe('outgoing request: sent as fetch(input, init) sends it', () => {
  const cases: [string, () => [string | URL, RequestInit | undefined]][] = [
    ['no init: GET', () => [`${base}/mcp?x=1#frag`, undefined]],
    [
      'a JSON string, as the MCP SDK transports send it',
      () => [
        `${base}/mcp`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'zoë' } }),
          signal: new AbortController().signal,
        },
      ],
    ],
    ['a string without a content type (text/plain;charset=UTF-8)', () => [`${base}/mcp`, { method: 'POST', body: 'zoë ✓ 😀' }]],
    ['an empty string body', () => [`${base}/mcp`, { method: 'POST', body: '' }]],
    ['bytes: no content type', () => [`${base}/mcp`, { method: 'POST', body: new Uint8Array([0, 255, 10]) }]],
    ['lower-case post is normalized (Fetch "normalize a method")', () => [`${base}/mcp`, { method: 'post', body: '{}' }]],
    ['lower-case delete is normalized', () => [new URL(`${base}/mcp`), { method: 'delete', headers: [['mcp-session-id', 's1']] }]],
    ['an extension method', () => [`${base}/mcp`, { method: 'PROPFIND' }]],
    ['headers as a Headers object, and redirect', () => [`${base}/mcp`, { headers: new Headers({ 'x-a': '1' }), redirect: 'manual' }]],
  ];
  for (const [name, make] of cases) {
    it(name, async () => {
      const [input, init] = make();
      const expected = await received(() => fetch(input, init));
      const [input2, init2] = make();
      expect(await sentAsIs(input2, init2)).toEqual(expected);
    });
  }

  it('URL and method as new Request gives them', () => {
    for (const [input, init] of [
      [`${base}/a b/../mcp?q=é#f`, { method: 'put' }],
      [new URL(`${base}/mcp`), { method: 'Options' }],
      // not in the normalized set: kept as written (Node's server would refuse it on the wire)
      [`${base}/mcp`, { method: 'patch' }],
      [`${base.replace('127.0.0.1', 'LOCALHOST')}/mcp`, undefined],
    ] as const) {
      const o = outgoingRequest(input, init);
      const r = new Request(input, init);
      expect([o.url, o.method]).toEqual([r.url, r.method]);
    }
  });
});

describe('outgoing request: what new Request refuses is refused the same way', () => {
  const refused: [string, string, RequestInit | undefined][] = [
    ['a relative URL', '/mcp', undefined],
    ['credentials in the URL', 'http://user:pass@127.0.0.1/mcp', undefined],
    ['a forbidden method (Fetch: CONNECT, TRACE, TRACK)', 'http://127.0.0.1/mcp', { method: 'trace' }],
    ['a method that is not a token', 'http://127.0.0.1/mcp', { method: 'GET /x' }],
    ['a GET with a body', 'http://127.0.0.1/mcp', { method: 'GET', body: '' }],
    ['a HEAD with a body', 'http://127.0.0.1/mcp', { method: 'head', body: new Uint8Array(1) }],
    ['an invalid header name', 'http://127.0.0.1/mcp', { headers: { 'bad name': 'x' } }],
    ['an invalid header value', 'http://127.0.0.1/mcp', { headers: { 'x-a': 'a\nb' } }],
    ['an unknown redirect mode', 'http://127.0.0.1/mcp', { redirect: 'sideways' as RequestInit['redirect'] }],
    ['a signal that is not an AbortSignal', 'http://127.0.0.1/mcp', { signal: {} as AbortSignal }],
    ['a mode new Request refuses', 'http://127.0.0.1/mcp', { mode: 'navigate' }],
  ];
  for (const [name, input, init] of refused) {
    it(name, () => {
      let expected: unknown;
      try {
        new Request(input, init);
      } catch (error) {
        expected = error;
      }
      expect(expected).toBeInstanceOf(TypeError);
      expect(() => outgoingRequest(input, init)).toThrow((expected as TypeError).message);
    });
  }
});

describe('outgoing request: the body of every attempt', () => {
  it('bytes are copied when the call starts: the caller may reuse its buffer', async () => {
    const buffer = new Uint8Array([1, 2, 3]);
    const o = outgoingRequest(`${base}/mcp`, { method: 'POST', body: buffer.buffer });
    buffer.fill(0);
    expect([...new Uint8Array((await o.body()) as ArrayBuffer)]).toEqual([1, 2, 3]);
  });

  it('a stream is read once, on first use, and every attempt gets the same bytes', async () => {
    const o = outgoingRequest(`${base}/mcp`, {
      method: 'POST',
      body: new Blob(['{"streamed":', 'true}']).stream(),
      duplex: 'half',
    } as RequestInit);
    const first = o.body();
    expect(o.body()).toBe(first);
    expect(Buffer.from((await first) as ArrayBuffer).toString()).toBe('{"streamed":true}');
  });

  it('a Request given as input: its URL, method, headers, signal and body', async () => {
    const controller = new AbortController();
    const input = new Request(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"from":"request"}',
      signal: controller.signal,
    });
    const o = outgoingRequest(input);
    expect([o.url, o.method, o.headers.get('content-type')]).toEqual([`${base}/mcp`, 'POST', 'application/json']);
    controller.abort();
    expect(o.signal?.aborted).toBe(true);
    expect(Buffer.from((await o.body()) as ArrayBuffer).toString()).toBe('{"from":"request"}');
  });
});
