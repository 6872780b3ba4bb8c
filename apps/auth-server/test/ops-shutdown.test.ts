/** Graceful shutdown: stop accepting, let in-flight requests finish (bounded), then close the store. */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@mcp-auth-kit/authorization-server';
import { startAuthServer } from '../src/index.js';

/** Starts a POST /token whose body is only half sent; `finish()` sends the rest. */
function slowTokenRequest(port: number) {
  const body = 'grant_type=client_credentials&client_id=nobody&scope=x';
  const req: ClientRequest = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
  });
  const response = new Promise<{ status: number } | { error: string }>((resolve) => {
    req.on('response', (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
  req.write(body.slice(0, 10));
  // The server has the request's head once the client is connected and a later request on another
  // connection has been answered: a fixed sleep was not enough on a loaded machine.
  const started = new Promise<void>((resolve) => req.on('socket', (s) => s.once('connect', () => resolve())))
    .then(() => fetch(`http://127.0.0.1:${port}/healthz`))
    .then((r) => r.arrayBuffer())
    .then(() => undefined);
  return { response, started, finish: () => req.end(body.slice(10)) };
}

async function refused(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/healthz`);
    return false;
  } catch {
    return true;
  }
}

/** A loopback server on a memory store with one token request in flight. */
async function serverWithSlowRequest(shutdownTimeoutMs: number) {
  const running = await startAuthServer({
    port: 0,
    host: '127.0.0.1',
    storage: { kind: 'memory' },
    logger: silentLogger,
    shutdownTimeoutMs,
  });
  const slow = slowTokenRequest(running.port);
  await slow.started;
  return { running, slow };
}

describe('graceful shutdown', () => {
  it('stops accepting, lets the in-flight request finish, then closes the store', async () => {
    const { running, slow } = await serverWithSlowRequest(10_000);
    let closed = false;
    const closing = running.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(await refused(running.port), 'new connections are refused while draining').toBe(true);
    expect(closed, 'close waits for the in-flight request').toBe(false);
    slow.finish();
    const result = await slow.response;
    expect(result).toEqual({ status: 401 }); // answered (invalid_client), not cut
    await closing;
    await expect(running.server.store.ping()).rejects.toThrow();
  });

  it('cuts requests still running after shutdownTimeoutMs', async () => {
    const { running, slow } = await serverWithSlowRequest(200);
    await running.close();
    expect(await slow.response).toEqual({ error: 'ECONNRESET' });
  });
});
