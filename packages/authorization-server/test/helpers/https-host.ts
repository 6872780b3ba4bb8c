/** A loopback HTTPS host with a throw-away CA (openssl), for CIMD documents in tests. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface HttpsHost {
  origin: string;
  caPem: string;
  /** Path → JSON document (or a function of the origin). */
  documents: Map<string, (origin: string) => unknown>;
  /** Path → Cache-Control of its answers (default `max-age=60`). */
  cacheControl: Map<string, string>;
  hits: string[];
  close(): Promise<void>;
}

/** `openssl req` arguments for a new unencrypted P-256 key; the key file's name follows. */
const NEW_P256_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout'];

function openssl(args: string[], cwd: string) {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** Starts the host serving `documents` (path → JSON document as a function of the origin); more can be set later. */
export async function startHttpsHost(documents: Record<string, (origin: string) => unknown> = {}): Promise<HttpsHost> {
  const dir = mkdtempSync(join(tmpdir(), 'cimd-tls-'));
  openssl(['req', '-x509', ...NEW_P256_KEY, 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=test CA'], dir);
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n');
  openssl(['req', ...NEW_P256_KEY, 'srv.key', '-out', 'srv.csr', '-subj', '/CN=127.0.0.1'], dir);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'srv.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'srv.pem',
      '-days',
      '1',
      '-extfile',
      'ext.cnf',
    ],
    dir,
  );
  const caPem = readFileSync(join(dir, 'ca.pem'), 'utf8');
  const key = readFileSync(join(dir, 'srv.key'));
  const cert = readFileSync(join(dir, 'srv.pem'));
  rmSync(dir, { recursive: true, force: true });

  const served = new Map(Object.entries(documents));
  const cacheControl = new Map<string, string>();
  const hits: string[] = [];
  let origin = '';
  const server: Server = createServer({ key, cert }, (req, res) => {
    hits.push(req.url ?? '');
    const doc = served.get(req.url ?? '');
    if (!doc) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.setHeader('cache-control', cacheControl.get(req.url ?? '') ?? 'max-age=60');
    res.end(JSON.stringify(doc(origin)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    caPem,
    documents: served,
    cacheControl,
    hits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A client ID metadata document for a native public client at `url` (MCP client registration
 * §Client ID Metadata Documents: its `client_id` is its own URL); `extra` overrides members
 * (`undefined` leaves one out of the JSON).
 */
export function cimdDocument(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: url,
    client_name: 'CIMD Test Client',
    redirect_uris: ['http://127.0.0.1/callback'],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...extra,
  };
}
