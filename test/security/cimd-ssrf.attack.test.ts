import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoopbackCertificate, type LoopbackCertificate } from '@mcp-auth-kit/testing';
import {
  NATIVE_REDIRECT,
  authorizationUrl,
  frontChannel,
  listenCounting,
  pkcePair,
  startAttackStack,
  type AttackStack,
} from './helpers/support.js';

/**
 * CIMD SSRF, end to end (MCP security best practices §SSRF; client registration §CIMD).
 * Only loopback targets: the test's own listeners. Nothing here names a non-loopback address.
 */

async function tryAuthorize(stack: AttackStack, clientId: string, redirectUri = NATIVE_REDIRECT) {
  return frontChannel(stack.issuer, authorizationUrl(stack, { clientId, redirectUri, challenge: pkcePair().challenge }));
}

describe('attack: CIMD SSRF with the dev private-network switch OFF (default)', () => {
  let stack: AttackStack;
  let v4: NonNullable<Awaited<ReturnType<typeof listenCounting>>>;
  let v6: Awaited<ReturnType<typeof listenCounting>>;
  let loopbackName: string | undefined;

  beforeAll(async () => {
    stack = await startAttackStack();
    v4 = (await listenCounting('127.0.0.1'))!;
    v6 = await listenCounting('::1');
    // A name (from /etc/hosts, not DNS) that resolves to loopback, when the machine has one.
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (addresses.length > 0 && addresses.every((a) => a.address === '127.0.0.1' || a.address.startsWith('127.') || a.address === '::1')) {
      loopbackName = name;
    }
  });
  afterAll(async () => {
    v4?.close();
    v6?.close();
    await stack?.close();
  });

  // [what the test calls it, how the client_id URL spells the loopback host]
  const v4Targets: Array<[string, string]> = [
    ['127.0.0.1', '127.0.0.1'],
    ['localhost', 'localhost'],
    ['a *.localhost name', 'app.localhost'],
    ['decimal IPv4 (2130706433)', '2130706433'],
    ['hex IPv4 (0x7f.0.0.1)', '0x7f.0.0.1'],
    ['short IPv4 (127.1)', '127.1'],
    ['IPv4-mapped IPv6 ([::ffff:127.0.0.1])', '[::ffff:127.0.0.1]'],
    ['0.0.0.0', '0.0.0.0'],
    ['trailing-dot localhost', 'localhost.'],
  ];

  it('the test listeners are up (IPv4 always; IPv6 ::1 when available)', () => {
    expect(v4.port).toBeGreaterThan(0);
  });

  for (const [what, host] of v4Targets) {
    it(`client_id on ${what} → invalid_client page, and the listener sees NO connection`, async () => {
      const clientId = `https://${host}:${v4.port}/client.json`;
      const result = await tryAuthorize(stack, clientId);
      expect(result.kind, what).toBe('stopped');
      expect((result as { status: number }).status).toBe(400);
      expect(v4.sockets, `${what}: the AS connected to the loopback target`).toHaveLength(0);
    });
  }

  it('client_id on [::1] → refused, and the IPv6 listener sees NO connection', async (ctx) => {
    if (!v6) ctx.skip();
    const result = await tryAuthorize(stack, `https://[::1]:${v6!.port}/client.json`);
    expect(result.kind).toBe('stopped');
    expect(v6!.sockets).toHaveLength(0);
  });

  // A host NAME is resolved and its answers checked before any connection: oidc-provider's own
  // dispatcher checks the peer only after connecting, which would already reach the target.
  /** The authorization with a client_id on `loopbackName`, at a listener of its own that records connections. */
  async function authorizeAtLoopbackName() {
    const own = (await listenCounting('127.0.0.1'))!;
    try {
      return { result: await tryAuthorize(stack, `https://${loopbackName}:${own.port}/client.json`), sockets: own.sockets };
    } finally {
      own.close();
    }
  }

  it('client_id whose host NAME resolves to loopback (/etc/hosts) → refused, NO connection at all', async (ctx) => {
    if (!loopbackName) ctx.skip();
    const { result, sockets } = await authorizeAtLoopbackName();
    expect(result.kind).toBe('stopped');
    expect((result as { status: number }).status).toBe(400);
    expect(sockets, 'the AS opened a TCP connection to the loopback target').toHaveLength(0);
  });

  it('client_id whose host NAME resolves to loopback → still refused (no document read, no code)', async (ctx) => {
    if (!loopbackName) ctx.skip();
    const { result } = await authorizeAtLoopbackName();
    expect(result.kind).toBe('stopped');
    expect((result as { status: number }).status).toBe(400);
  });

  it('http (not https) client_id, URL with credentials, URL without a path → refused without a connection', async () => {
    for (const clientId of [
      `http://127.0.0.1:${v4.port}/client.json`,
      `https://user:pass@127.0.0.1:${v4.port}/client.json`,
      `https://127.0.0.1:${v4.port}/`,
    ]) {
      const result = await tryAuthorize(stack, clientId);
      expect(result.kind, clientId).toBe('stopped');
    }
    expect(v4.sockets).toHaveLength(0);
  });

  it('the AS is still healthy after the attempts', async () => {
    const res = await fetch(`${stack.issuer}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
  });
});

/**
 * Hostile document servers, with the dev switch ON (loopback issuer only) so that our own
 * loopback HTTPS listener can play the attacker's host.
 */
describe('attack: hostile CIMD document hosts (dev private-network switch ON, loopback only)', () => {
  let stack: AttackStack;
  let cert: LoopbackCertificate;
  let host: HttpsServer;
  let origin: string;
  const hits = new Map<string, number>();
  let bytesWritten = 0;
  let bigAborted = false;
  const BIG = 64 * 1024 * 1024;
  const routes: Record<string, (res: import('node:http').ServerResponse, url: string) => void> = {};

  beforeAll(async () => {
    cert = await createLoopbackCertificate();
    host = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const route = routes[path];
      if (!route) return void res.writeHead(404).end();
      route(res, `${origin}${path}`);
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    origin = `https://127.0.0.1:${(host.address() as AddressInfo).port}`;
    stack = await startAttackStack({
      cimdAllowPrivateNetwork: true,
      authorizationServer: { cimd: { allowPrivateNetwork: true, extraCaCertificates: cert.cert } },
    });

    const doc = (url: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        client_id: url,
        client_name: 'cimd attack',
        redirect_uris: [NATIVE_REDIRECT],
        token_endpoint_auth_method: 'none',
        ...extra,
      });
    routes['/good.json'] = (res, url) => res.writeHead(200, { 'content-type': 'application/json' }).end(doc(url));
    routes['/redirect.json'] = (res) => res.writeHead(302, { location: `${origin}/redirect-target.json` }).end();
    routes['/redirect-target.json'] = (res, url) => res.writeHead(200, { 'content-type': 'application/json' }).end(doc(url));
    routes['/not-json.json'] = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json</html>');
    routes['/html.json'] = (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    routes['/array.json'] = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    routes['/mismatch.json'] = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(doc(`${origin}/other.json`));
    routes['/js-redirect.json'] = (res, url) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ client_id: url, client_name: 'x', redirect_uris: ['javascript:alert(1)'], token_endpoint_auth_method: 'none' }),
        );
    routes['/no-name.json'] = (res, url) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ client_id: url, redirect_uris: [NATIVE_REDIRECT], token_endpoint_auth_method: 'none' }));
    routes['/trailing.json'] = (res, url) => res.writeHead(200, { 'content-type': 'application/json' }).end(doc(`${url}/`));
    routes['/404.json'] = (res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    routes['/secret.json'] = (res, url) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(doc(url, { token_endpoint_auth_method: 'client_secret_post', client_secret: 'x' }));
    routes['/oversized.json'] = (res, url) => {
      // A valid document padded far beyond any sane size, streamed with backpressure.
      const head = Buffer.from(`{"client_id":${JSON.stringify(url)},"client_name":"big","redirect_uris":["${NATIVE_REDIRECT}"],"pad":"`);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', () => {
        if (bytesWritten < BIG) bigAborted = true;
      });
      let sent = 0;
      const pump = () => {
        if (sent === 0) {
          res.write(head);
          sent += head.length;
        }
        while (sent < BIG) {
          sent += chunk.length;
          bytesWritten = sent;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end('"}');
      };
      pump();
    };
    routes['/slow.json'] = (res) => {
      // Slow-loris: headers, then one byte every 500 ms, never finishing within the AS timeout.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      const timer = setInterval(() => res.write(' '), 500);
      res.on('close', () => clearInterval(timer));
    };
  });
  afterAll(async () => {
    host?.closeAllConnections();
    host?.close();
    await stack?.close();
  });

  it('baseline: a well-formed document on the dev host is fetched and the flow reaches the callback', async () => {
    const result = await tryAuthorize(stack, `${origin}/good.json`);
    expect(result.kind).toBe('callback');
    expect((result as { url: URL }).url.searchParams.get('code')).toBeTruthy();
  });

  it('redirect (302) from the document URL is NOT followed → refused, the target is never fetched', async () => {
    const result = await tryAuthorize(stack, `${origin}/redirect.json`);
    expect(result.kind).toBe('stopped');
    expect(hits.get('/redirect.json')).toBeGreaterThanOrEqual(1);
    expect(hits.get('/redirect-target.json') ?? 0).toBe(0);
  });

  for (const [what, path] of [
    ['non-JSON body with a JSON content type', '/not-json.json'],
    ['text/html document', '/html.json'],
    ['JSON array instead of an object', '/array.json'],
    ['client_id in the document differs from its URL', '/mismatch.json'],
    ['document with a client_secret (shared-secret auth)', '/secret.json'],
    ['document with a javascript: redirect URI', '/js-redirect.json'],
    ['document without client_name (MCP: MUST include it)', '/no-name.json'],
    ['client_id differing by a trailing slash', '/trailing.json'],
    ['document URL answering 404', '/404.json'],
  ] as const) {
    it(`${what} → refused (no code), no 5xx`, async () => {
      const result = await tryAuthorize(stack, `${origin}${path}`);
      expect(result.kind).toBe('stopped');
      const status = (result as { status: number }).status;
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
    });
  }

  it('slow-loris document host → the AS gives up (timeout) with a 4xx, and keeps serving others meanwhile', async () => {
    const started = Date.now();
    const pending = tryAuthorize(stack, `${origin}/slow.json`);
    // Other requests are served while the fetch hangs.
    const meanwhile = await fetch(`${stack.issuer}/.well-known/oauth-authorization-server`);
    expect(meanwhile.status).toBe(200);
    const result = await pending;
    expect(result.kind).toBe('stopped');
    expect((result as { status: number }).status).toBeLessThan(500);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 25_000);

  // The AS's fetch wrapper stops reading at oidc-provider's 5 KiB CIMD limit (no memory DoS).
  it('oversized document (64 MiB) → refused AND the AS stops reading early (bounded memory)', async () => {
    const result = await tryAuthorize(stack, `${origin}/oversized.json`);
    expect(result.kind).toBe('stopped');
    expect((result as { status: number }).status).toBeLessThan(500);
    await new Promise((r) => setTimeout(r, 200));
    expect(bigAborted).toBe(true);
    expect(bytesWritten).toBeLessThan(BIG / 4);
  }, 25_000);
});
