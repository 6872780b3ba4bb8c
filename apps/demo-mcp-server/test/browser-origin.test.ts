import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoServer, type DemoServer } from '../src/index.js';
import { startFakeAuthorizationServer, type FakeAuthorizationServer } from './helpers/fake-as.js';

// Browser-based MCP clients on an allowed origin: CORS preflight, readable challenges; other
// origins refused (Streamable HTTP §Security: a present, invalid Origin → 403).
const APP_ORIGIN = 'http://app.example:8080';
let as: FakeAuthorizationServer;
let demo: DemoServer;

beforeAll(async () => {
  as = await startFakeAuthorizationServer();
  demo = await startDemoServer({ port: 0, host: '127.0.0.1', issuer: as.issuer, allowedOrigins: [APP_ORIGIN] });
});

afterAll(async () => {
  await demo?.close();
  await as?.close();
});

const preflight = (origin: string) =>
  fetch(demo.url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name',
    },
  });

describe('CORS on the MCP endpoint', () => {
  it('a preflight from an allowed origin succeeds without a token and allows Authorization', async () => {
    const res = await preflight(APP_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/authorization/i);
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
  });

  it('Streamable HTTP §Security: a preflight from another origin → 403 without CORS headers', async () => {
    const res = await preflight('http://evil.example');
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('RFC 9728 §5.1 cross-origin: the 401 challenge is exposed to the allowed origin', async () => {
    const res = await fetch(demo.url, {
      method: 'POST',
      headers: { origin: APP_ORIGIN, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/i);
    expect(res.headers.get('www-authenticate')).toMatch(/resource_metadata=/);
  });

  it('an authenticated request from the allowed origin is served', async () => {
    const token = await as.sign({ aud: demo.resource, sub: 'browser-user' });
    const res = await fetch(demo.url, {
      method: 'POST',
      headers: {
        origin: APP_ORIGIN,
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
  });

  it('Streamable HTTP §Security: a request with a valid token from a foreign origin → 403', async () => {
    const token = await as.sign({ aud: demo.resource });
    const res = await fetch(demo.url, {
      method: 'POST',
      headers: { origin: 'http://evil.example', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('the resource origin itself is not implicitly allowed once origins are configured', async () => {
    const res = await preflight(new URL(demo.resource).origin);
    expect(res.status).toBe(403);
  });
});
