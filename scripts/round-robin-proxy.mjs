#!/usr/bin/env node
// The load balancer of the multi-instance topology (docker-compose.yml and
// test/multi-instance): a few lines of node:http. Each request goes to the next backend in
// turn; a backend that refuses the connection (stopped, killed) is skipped, as a balancer's
// health check would, so a flow goes on on the others. A fresh connection per request (no
// pooled socket to a dead backend); `Host` is passed as sent.
//
//   PROXY_ROUTES="9000=127.0.0.1:9001,127.0.0.1:9002;3000=127.0.0.1:3001,127.0.0.1:3002" \
//   PROXY_HOST=0.0.0.0 node scripts/round-robin-proxy.mjs
import { createServer, request as httpRequest } from 'node:http';
import { pathToFileURL } from 'node:url';

const RETRYABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);

/**
 * Starts one balancer. `targets` (base URLs) may be filled after it listens: the backends'
 * issuer or resource usually names the balancer's port.
 * @param {{ port?: number, host?: string, targets?: string[] }} [options]
 */
export async function startRoundRobinProxy(options = {}) {
  let turn = 0;
  const proxy = { url: '', port: 0, targets: options.targets ?? [], served: [], log: [], close: async () => {} };

  const forward = (req, res, body, attempt) => {
    const index = turn++ % proxy.targets.length;
    const target = new URL(proxy.targets[index]);
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent: false },
      (answer) => {
        proxy.served[index] = (proxy.served[index] ?? 0) + 1;
        proxy.log.push({ target: index, method: req.method, path: req.url, headers: req.headers, body, status: answer.statusCode });
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (res.headersSent) return res.destroy();
      if (RETRYABLE.has(error.code) && attempt + 1 < proxy.targets.length) return forward(req, res, body, attempt + 1);
      res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
    });
    upstream.end(body);
  };

  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), 0));
  });
  await new Promise((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  proxy.port = server.address().port;
  proxy.url = `http://localhost:${proxy.port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

/** `PROXY_ROUTES`: `<port>=<host:port>,<host:port>;<port>=…` → one balancer per listening port. */
export function parseRoutes(text) {
  return text
    .split(';')
    .filter((route) => route.trim() !== '')
    .map((route) => {
      const [port, backends] = route.split('=');
      const targets = (backends ?? '')
        .split(',')
        .map((b) => b.trim())
        .filter(Boolean)
        .map((b) => `http://${b}`);
      if (!/^\d+$/.test(port?.trim() ?? '') || targets.length === 0) throw new Error(`PROXY_ROUTES: cannot read "${route}"`);
      return { port: Number(port), targets };
    });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const routes = parseRoutes(process.env.PROXY_ROUTES ?? '');
  const proxies = await Promise.all(routes.map((r) => startRoundRobinProxy({ ...r, host: process.env.PROXY_HOST ?? '127.0.0.1' })));
  for (const r of routes) process.stdout.write(`round-robin proxy on port ${r.port} → ${r.targets.join(', ')}\n`);
  const stop = () => Promise.all(proxies.map((p) => p.close())).then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
