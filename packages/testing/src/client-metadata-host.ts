/**
 * An HTTPS host on 127.0.0.1 serving Client ID Metadata Documents (CIMD), so a test can use
 * an `https://…` client_id the authorization server really fetches.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createLoopbackCertificate, type LoopbackCertificate } from './loopback-certificate.js';

export interface ClientMetadataHost {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  /** The certificate the host serves (trust it: `cimd.extraCaCertificates` of the AS). */
  certificate: LoopbackCertificate;
  /**
   * Publishes a document at `path` and returns its URL, which is the client_id. `client_id` is
   * filled in; `token_endpoint_auth_method` defaults to `none`.
   */
  publish(path: string, metadata: Record<string, unknown>): string;
  /** Serves any body (for malformed-document tests); `contentType` defaults to application/json. */
  publishRaw(path: string, body: string, contentType?: string, status?: number): string;
  /** How many times each path was fetched. */
  fetchCount(path: string): number;
  close(): Promise<void>;
}

export async function startClientMetadataHost(options: { certificate?: LoopbackCertificate } = {}): Promise<ClientMetadataHost> {
  const certificate = options.certificate ?? (await createLoopbackCertificate());
  const documents = new Map<string, { status: number; type: string; body: string }>();
  const counts = new Map<string, number>();
  const server: Server = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://host').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const doc = req.method === 'GET' ? documents.get(path) : undefined;
    if (!doc) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    res.writeHead(doc.status, { 'content-type': doc.type, 'cache-control': 'max-age=60' }).end(doc.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const urlOf = (path: string) => {
    if (!path.startsWith('/') || path === '/') throw new TypeError('path must start with "/" and name a document (CIMD needs a path)');
    return `${origin}${path}`;
  };

  return {
    origin,
    certificate,
    publish(path, metadata) {
      const clientId = urlOf(path);
      const body = JSON.stringify({ token_endpoint_auth_method: 'none', ...metadata, client_id: clientId });
      documents.set(path, { status: 200, type: 'application/json', body });
      return clientId;
    },
    publishRaw(path, body, contentType = 'application/json', status = 200) {
      documents.set(path, { status, type: contentType, body });
      return urlOf(path);
    },
    fetchCount: (path) => counts.get(path) ?? 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
