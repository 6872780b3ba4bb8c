/**
 * An HTTP server on 127.0.0.1:0 whose handler can be set after it listens: the protected
 * resource's URI (with its port) must be known before the AS and the MCP server are built.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  server: Server;
  /** Sets (or replaces) the handler, e.g. an express app. */
  handle(listener: RequestListener): void;
  close(): Promise<void>;
}

export interface LoopbackServerOptions {
  /** Port to listen on (default 0: an ephemeral port). */
  port?: number;
}

/** What {@link startLoopbackServer} assumes for an option not given. */
const DEFAULTS = { port: 0 } as const;

export async function startLoopbackServer(listener?: RequestListener, options: LoopbackServerOptions = {}): Promise<LoopbackServer> {
  let current: RequestListener | undefined = listener;
  const server = createServer((req, res) => {
    if (current) return current(req, res);
    res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"not_ready"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULTS.port, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  let closed = false;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    server,
    handle(next) {
      current = next;
    },
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
