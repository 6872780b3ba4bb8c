import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createResourceServer, type ResourceServer, type ResourceServerOptions } from '@mcp-auth-kit/resource-server';

/**
 * A minimal protected endpoint built with the public resource-server API, for faults that need
 * options the demo server does not expose (clock, tolerance, JWKS timings). It listens first,
 * so its resource URI can be configured at the AS before the middleware is built.
 */
export interface ProtectedEndpoint {
  resource: string;
  /** Builds (or rebuilds) the middleware in front of the endpoint. */
  protect(issuer: string, options?: Partial<ResourceServerOptions>): void;
  close(): Promise<void>;
}

export async function listenProtectedEndpoint(): Promise<ProtectedEndpoint> {
  let handler: ((req: never, res: never) => void) | undefined;
  let rs: ResourceServer | undefined;
  const server: Server = createServer((req, res) => (handler ? handler(req as never, res as never) : res.writeHead(503).end()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const resource = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return {
    resource,
    protect(issuer, options = {}) {
      void rs?.close();
      rs = createResourceServer({ resource, authorizationServers: [issuer], scopePolicy: { default: ['notes:read'] }, ...options });
      const app = express();
      app.use(rs.metadataHandler);
      app.post('/mcp', rs.protect, (_req, res) => {
        res.json({ ok: true });
      });
      handler = app as never;
    },
    async close() {
      await rs?.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export async function post(url: string, token?: string): Promise<{ status: number; challenge: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: '{}',
  });
  await res.arrayBuffer();
  return { status: res.status, challenge: res.headers.get('www-authenticate') };
}
