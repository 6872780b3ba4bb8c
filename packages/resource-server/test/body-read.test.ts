import { createHook } from 'node:async_hooks';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createResourceServer, type ResourceServer } from '../src/index.js';
import { makeKey, RESOURCE, rpc, signToken, StubIssuer } from './helpers/harness.js';

// The JSON body of an MCP POST is read by the middleware once the token is valid. With a cached
// token that read runs on the stream's events (no promise); these tests drive it over real
// sockets: bodies sent in pieces, over the limit, cut off, or on a stream paused before us.

const LIMIT = 2048;

let as: StubIssuer;
let rs: ResourceServer;
let server: ReturnType<express.Express['listen']>;
let port: number;
let token: string;
const handled: unknown[] = [];
/** This package's source files, as they appear in a stack trace. */
const OUR_SOURCE = /packages[\\/]resource-server[\\/]src[\\/]/;
/** Promises created by our code between the middleware's call and its `next()`, per request (async hook). */
let promisesInMiddleware: number[] = [];

beforeAll(async () => {
  as = await new StubIssuer().start();
  const key = await makeKey('ES256');
  as.keys = [key];
  rs = createResourceServer({
    resource: RESOURCE,
    authorizationServers: [as.issuer],
    scopePolicy: { default: ['notes:read'] },
    allowedHosts: ['localhost:3000'],
    maxBodyBytes: LIMIT,
  });
  token = await signToken({ key, issuer: as.issuer, claims: { scope: 'notes:read' } });

  let counting = false;
  let count = 0;
  createHook({
    init(_id, type) {
      if (!counting || type !== 'PROMISE') return;
      // Only promises made with this package's code on the stack: the window stays open while
      // the body arrives, and on a busy machine the test runner's own messages between its
      // processes (promises of its own) land in it too.
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 200;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      if (OUR_SOURCE.test(stack)) count++;
    },
  }).enable();
  const app = express();
  app.post(
    '/mcp',
    (req, _res, next) => {
      if (req.headers['x-pause'] !== undefined) req.pause();
      next();
    },
    (req, res, next) => {
      count = 0;
      counting = true;
      rs.protect(req, res, (...args: unknown[]) => {
        counting = false;
        promisesInMiddleware.push(count);
        next(...(args as []));
      });
    },
    (req: Request & { auth?: { token?: string } }, res) => {
      handled.push(req.body);
      res.json({ body: req.body ?? null, authenticated: req.auth?.token === token });
    },
  );
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rs.close();
  await as.stop();
});

interface Sent {
  status: number | undefined;
  headers: IncomingMessage['headers'];
  body: string;
  error?: string;
}

/** POST /mcp with the body in `pieces` (chunked, no Content-Length), `pause` ms apart. */
function send(pieces: string[], options: { headers?: Record<string, string>; abortAfter?: number; pause?: number } = {}): Promise<Sent> {
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        // a new connection each time: a test's cut connection is never reused by the next
        agent: false,
        path: '/mcp',
        method: 'POST',
        headers: {
          host: 'localhost:3000',
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          ...options.headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
        res.on('error', (err) => resolve({ status: res.statusCode, headers: res.headers, body, error: err.message }));
      },
    );
    req.on('error', (err) => resolve({ status: undefined, headers: {}, body: '', error: err.message }));
    let i = 0;
    const next = () => {
      if (options.abortAfter !== undefined && i === options.abortAfter) {
        req.destroy();
        resolve({ status: undefined, headers: {}, body: '', error: 'aborted by the test' });
        return;
      }
      if (i === pieces.length) {
        req.end();
        return;
      }
      req.write(pieces[i++]);
      setTimeout(next, options.pause ?? 5);
    };
    next();
  });
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function healthy(): Promise<void> {
  const res = await send([JSON.stringify(rpc('ping', undefined, 'after'))]);
  expect(res.status).toBe(200);
  expect(JSON.parse(res.body)).toEqual({ body: rpc('ping', undefined, 'after'), authenticated: true });
}

describe('rs.protect reads the JSON body of a POST (cached token: stream events, no promise)', () => {
  it('a body sent in pieces reaches the handler parsed, on the first request (token verified) and once cached', async () => {
    const body = JSON.stringify(rpc('tools/call', { name: 'whoami', arguments: { text: 'é'.repeat(100) } }, 'pieces'));
    for (let round = 0; round < 2; round++) {
      const res = await send(pieces(body, 37));
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ body: JSON.parse(body), authenticated: true });
    }
  });

  it('with the token cached, the body is read without creating a promise (async hooks see none)', async () => {
    await healthy();
    promisesInMiddleware = [];
    for (let i = 0; i < 3; i++) await healthy();
    expect(promisesInMiddleware).toEqual([0, 0, 0]);
  });

  it('a cached token and a body over maxBodyBytes sent without Content-Length → 413, connection closed, handler not run', async () => {
    await healthy();
    const before = handled.length;
    const big = JSON.stringify(rpc('tools/call', { name: 'whoami', arguments: { text: 'x'.repeat(LIMIT * 3) } }));
    const res = await send(pieces(big, 512), { pause: 2 });
    // the server stops reading at the limit: the client sees the 413, or a reset while still sending
    if (res.status !== undefined) {
      expect(res.status).toBe(413);
      expect(res.headers.connection).toBe('close');
      expect(JSON.parse(res.body)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Request body too large' } });
    } else {
      expect(res.error).toMatch(/ECONNRESET|EPIPE|socket hang up/);
    }
    expect(handled.length).toBe(before);
    await healthy();
  });

  it('a Content-Length over maxBodyBytes → 413 before any byte is read', async () => {
    const res = await send(['{}'], { headers: { 'content-length': String(LIMIT + 1) }, abortAfter: 1 });
    // the request is cut by the test after its first piece: the answer may come before that
    expect(res.status === 413 || res.error !== undefined).toBe(true);
    await healthy();
  });

  it('invalid JSON in pieces → 400 parse error, handler not run', async () => {
    const before = handled.length;
    const res = await send(['{"jsonrpc":', '"2.0", "id": ']);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toEqual({ code: -32700, message: 'Parse error: invalid JSON' });
    expect(handled.length).toBe(before);
  });

  it('a client that goes away in the middle of its body: the handler never runs and the server stays healthy', async () => {
    await healthy();
    const before = handled.length;
    await send(['{"jsonrpc":"2.0",', '"id":1,', '"method":"ping"}'], { abortAfter: 2 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(handled.length).toBe(before);
    await healthy();
  });

  it('a stream paused before the middleware is still read', async () => {
    await healthy();
    const res = await send([JSON.stringify(rpc('ping', undefined, 'paused'))], { headers: { 'x-pause': '1' } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).body).toEqual(rpc('ping', undefined, 'paused'));
  });
});
