import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ERR, McpAuthError } from './errors.js';
import { CALLBACK_PAGE_CSP, callbackPage, IGNORED_PAGE } from './callback-page.js';
import { DEFAULTS } from './config/defaults.js';

export interface LoopbackListenerOptions {
  /** Loopback interface to bind. Default `127.0.0.1` (RFC 8252 §7.3; never `0.0.0.0`). */
  host?: string;
  /** Port; 0 (default) lets the OS pick an ephemeral one. */
  port?: number;
  /** Callback path. Default `/callback`. */
  path?: string;
}

export interface WaitForCallbackOptions {
  /**
   * The `state` sent in the authorization request. Only a request on the callback path carrying
   * exactly this `state` ends the wait; any other request is answered 400 and ignored.
   */
  state: string;
  /**
   * The authorization server's issuer (RFC 9207 `iss`): the page shows the server's
   * `error_description` only for a response carrying this `iss`. Display only; validating the
   * response stays the caller's job.
   */
  issuer?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface LoopbackListener {
  /** `http://127.0.0.1:<port>/callback` */
  redirectUri: string;
  /**
   * Resolves with the URL of the first request on the callback path whose `state` matches
   * (RFC 6749 §10.12): anyone who can reach the port can send a forged callback, and such a
   * request must neither end nor fail the login. Requests arriving before this is called are refused.
   */
  waitForCallback(options: WaitForCallbackOptions): Promise<URL>;
  close(): Promise<void>;
}

const SECURITY_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'content-security-policy': CALLBACK_PAGE_CSP,
} as const;

/** Starts the native-app redirect listener (RFC 8252 §7.3) on a loopback address. */
export async function startLoopbackListener(options: LoopbackListenerOptions = {}): Promise<LoopbackListener> {
  const host = options.host ?? DEFAULTS.loopback.host;
  const path = options.path ?? DEFAULTS.loopback.path;
  let waiter: { state: string; issuer?: string; accept: (url: URL) => void } | undefined;
  let done = false;
  const server: Server = createServer((req, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', `http://${host.includes(':') ? `[${host}]` : host}`);
    if (req.method !== 'GET' || url.pathname !== path || done) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found');
      return;
    }
    const states = url.searchParams.getAll('state');
    if (!waiter || states.length !== 1 || states[0] !== waiter.state) {
      res.writeHead(400, SECURITY_HEADERS).end(IGNORED_PAGE);
      return;
    }
    done = true;
    res.writeHead(200, SECURITY_HEADERS).end(callbackPage(url, waiter.issuer).html);
    waiter.accept(url);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULTS.loopback.port, host, () => resolve());
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
    waitForCallback({ state, issuer, timeoutMs = 300_000, signal }: WaitForCallbackOptions) {
      if (typeof state !== 'string' || !state) {
        return Promise.reject(new McpAuthError(ERR.INVALID_ARGUMENT, 'waitForCallback needs the "state" of the authorization request'));
      }
      return new Promise<URL>((resolve, reject) => {
        const stop = (err: McpAuthError) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          if (waiter === current) waiter = undefined;
          reject(err);
        };
        const timer = setTimeout(
          () => stop(new McpAuthError(ERR.AUTHORIZATION_TIMEOUT, `no authorization response within ${timeoutMs} ms`)),
          timeoutMs,
        );
        timer.unref?.();
        const onAbort = () => stop(new McpAuthError(ERR.AUTHORIZATION_TIMEOUT, 'waiting for the authorization response was aborted'));
        const current = {
          state,
          issuer,
          accept: (url: URL) => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            resolve(url);
          },
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        waiter = current;
      });
    },
  };
}
