import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ERR, McpAuthError } from './errors.js';

export interface LoopbackListenerOptions {
  /** Loopback interface to bind. Default `127.0.0.1` (RFC 8252 §7.3; never `0.0.0.0`). */
  host?: string;
  /** Port; 0 (default) lets the OS pick an ephemeral one. */
  port?: number;
  /** Callback path. Default `/callback`. */
  path?: string;
}

export interface LoopbackListener {
  /** `http://127.0.0.1:<port>/callback` */
  redirectUri: string;
  /** Resolves with the first request URL on the callback path. */
  waitForCallback(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<URL>;
  close(): Promise<void>;
}

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>mcp-auth-kit</title></head>
<body><p>Authorization response received. You can close this window and return to the application.</p></body></html>`;

/** Starts the native-app redirect listener (RFC 8252 §7.3) on a loopback address. */
export async function startLoopbackListener(options: LoopbackListenerOptions = {}): Promise<LoopbackListener> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/callback';
  let resolveCallback!: (url: URL) => void;
  const received = new Promise<URL>((resolve) => {
    resolveCallback = resolve;
  });
  let done = false;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${host.includes(':') ? `[${host}]` : host}`);
    if (req.method !== 'GET' || url.pathname !== path || done) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found');
      return;
    }
    done = true;
    res
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
        'content-security-policy': "default-src 'none'",
      })
      .end(PAGE);
    resolveCallback(url);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const redirectUri = `http://${hostPart}:${port}${path}`;
  let closed = false;
  const close = () =>
    closed
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          closed = true;
          server.closeAllConnections?.();
          server.close(() => resolve());
        });
  return {
    redirectUri,
    close,
    waitForCallback({ timeoutMs = 300_000, signal } = {}) {
      return new Promise<URL>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new McpAuthError(ERR.AUTHORIZATION_TIMEOUT, `no authorization response within ${timeoutMs} ms`)),
          timeoutMs,
        );
        timer.unref?.();
        const onAbort = () => {
          clearTimeout(timer);
          reject(new McpAuthError(ERR.AUTHORIZATION_TIMEOUT, 'waiting for the authorization response was aborted'));
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        received.then((url) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(url);
        });
      });
    },
  };
}
