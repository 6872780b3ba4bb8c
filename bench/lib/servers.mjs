/** Loopback listeners whose handler can be swapped, and that count the requests they receive. */
import { createServer } from 'node:http';

/** Header the bench's headless user agent adds, so front-channel hops are counted apart. */
export const UA_HEADER = 'x-bench-user-agent';

export async function listen({ onRequest } = {}) {
  let handler = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const counts = { client: 0, userAgent: 0 };
  /** `METHOD path` of every request since the last reset (query strings dropped: they may carry codes). */
  const log = [];
  const server = createServer((req, res) => {
    if (req.headers[UA_HEADER]) counts.userAgent++;
    else counts.client++;
    log.push(`${req.headers[UA_HEADER] ? 'browser ' : ''}${req.method} ${(req.url ?? '').split('?')[0]}`);
    onRequest?.(req);
    handler(req, res);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = server.address().port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    counts,
    log,
    resetCounts() {
      counts.client = 0;
      counts.userAgent = 0;
      log.length = 0;
    },
    setHandler(next) {
      handler = next;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs every closer (last opened first), whatever the others do. */
export async function closeAll(closers) {
  for (const close of [...closers].reverse()) {
    try {
      await close();
    } catch {
      // shutting down: nothing more to do with a failure here
    }
  }
}
