/**
 * Graceful shutdown of the demo MCP server (server.ts close(): drain, stop accepting, let
 * in-flight requests finish within shutdownTimeoutMs, then cut).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoServer } from '../src/index.js';
import { startFakeAuthorizationServer, type FakeAuthorizationServer } from './helpers/fake-as.js';
import { LEGACY_VERSION } from './helpers/mcp-wire.js';
import { isListening } from '@mcp-auth-kit/test-utils';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One keep-alive connection the test drives by hand: a `tools/list` POST whose body is only
 * half sent, so the request stays in flight until `finish()`; `finish()` can pipeline more
 * requests behind it on the same connection (the only way in once the listener is closed).
 */
async function heldMcpRequest(port: number, token: string) {
  const socket: Socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  const ended = new Promise<{ error?: string }>((resolve) => {
    socket.once('close', () => resolve({}));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  socket.write(
    [
      'POST /mcp HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      `Authorization: Bearer ${token}`,
      `MCP-Protocol-Version: ${LEGACY_VERSION}`,
      'Content-Type: application/json',
      'Accept: application/json, text/event-stream',
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body.slice(0, 10),
    ].join('\r\n'),
  );
  return {
    received: () => received,
    ended,
    finish(pipelined = '') {
      socket.write(body.slice(10) + pipelined);
    },
    destroy: () => socket.destroy(),
  };
}

/** The status codes of the HTTP responses read from a connection, in order. */
function statuses(raw: string): number[] {
  return [...raw.matchAll(/^HTTP\/1\.1 (\d{3}) /gm)].map((m) => Number(m[1]));
}

describe('demo MCP server: graceful shutdown', () => {
  let as: FakeAuthorizationServer;
  beforeAll(async () => {
    as = await startFakeAuthorizationServer();
  });
  afterAll(() => as?.close());

  it('close(): new connections are refused, /readyz answers 503 "draining", and the in-flight MCP request completes', async () => {
    const demo = await startDemoServer({ port: 0, host: '127.0.0.1', issuer: as.issuer, shutdownTimeoutMs: 10_000 });
    const held = await heldMcpRequest(demo.port, await as.sign({ aud: demo.resource, scope: 'notes:read' }));
    try {
      await sleep(100); // the request is in the app (token checked, waiting for its body)
      let closed = false;
      const closing = demo.close().then(() => (closed = true));
      await sleep(100);
      expect(await isListening(demo.port), 'new connections are refused while draining').toBe(false);
      expect(closed, 'close() waits for the in-flight request').toBe(false);
      expect(held.received(), 'no response before the body is complete').toBe('');

      // Readiness on the still-open connection, pipelined behind the held request.
      held.finish(`GET /readyz HTTP/1.1\r\nHost: 127.0.0.1:${demo.port}\r\n\r\n`);
      expect(await held.ended).toEqual({});
      const raw = held.received();
      expect(statuses(raw)).toEqual([200, 503]);
      expect(raw).toContain('"name":"list_notes"'); // the tools/list result, not cut
      expect(raw).toContain('{"status":"draining"}');
      await closing;
      expect(closed).toBe(true);
    } finally {
      held.destroy();
      await demo.close();
    }
  });

  it('requests still running after shutdownTimeoutMs are cut, and close() resolves', async () => {
    const demo = await startDemoServer({ port: 0, host: '127.0.0.1', issuer: as.issuer, shutdownTimeoutMs: 200 });
    const held = await heldMcpRequest(demo.port, await as.sign({ aud: demo.resource, scope: 'notes:read' }));
    try {
      await sleep(100);
      const started = Date.now();
      await demo.close();
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      const result = await held.ended;
      expect(statuses(held.received())).toEqual([]);
      expect([undefined, 'ECONNRESET']).toContain(result.error); // closed, never answered
    } finally {
      held.destroy();
    }
  });
});
