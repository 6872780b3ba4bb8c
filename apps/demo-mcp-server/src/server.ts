import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, isLoopbackHost } from '@mcp-auth-kit/protocol';
import { CONFIG_SUBJECT, createDemoApp, type DemoAppOptions } from './app.js';
import { DEMO_DEFAULTS } from './defaults.js';
import type { NotesRepository } from './notes-store.js';
import { connectSharedState, type DemoSharedState } from './shared-state.js';

export interface StartDemoServerOptions extends Omit<DemoAppOptions, 'resource'> {
  /** TCP port; `0` picks a free one. Default 3000. */
  port?: number;
  /** One address to listen on. Default: loopback only, `127.0.0.1` and (when available) `::1`. */
  host?: string;
  /** Several addresses on the same port (the first is required, the others optional); overrides `host`. */
  hosts?: string[];
  /** Canonical resource URI; default `http://localhost:<port>/mcp`. */
  resource?: string;
  /**
   * On close: how long in-flight requests may run before their connections are cut (default 0:
   * cut at once, since open SSE streams never end by themselves).
   */
  shutdownTimeoutMs?: number;
  /**
   * Redis URL (`REDIS_URL`) for state shared by several replicas: notes, the DPoP replay store and
   * the grant revocation list. Unset: everything in this process (one replica).
   */
  redisUrl?: string;
  /** Key and channel prefix in Redis (`REDIS_PREFIX`, default `mcp-auth-kit:`); the AS must use the same. */
  redisPrefix?: string;
}

export interface DemoServer {
  /** URL of the MCP endpoint on this machine. */
  url: string;
  /** Canonical resource URI (the tokens' audience). */
  resource: string;
  port: number;
  /** Addresses actually listened on. */
  hosts: string[];
  store: NotesRepository;
  /** Where shared state lives: `memory` (this process) or `redis`. */
  sharedState: 'memory' | 'redis';
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

function closeServer(server: Server, graceMs = 0): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    // Stop accepting; idle keep-alive sockets close now and in-flight requests may finish
    // within the grace period; then open SSE responses and the rest are cut.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(cut);
      resolve();
    });
    if (graceMs <= 0) server.closeAllConnections();
    else server.closeIdleConnections();
  });
}

/** An IPv6 address is unavailable on hosts without IPv6 loopback; that address is then skipped. */
function isAddressUnavailable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT';
}

/** How to reach an address from this machine (the unspecified addresses mean loopback too). */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** Listens on every host on one port (the first host's, when `port` is 0); returns the port. */
async function listenAll(
  hosts: string[],
  port: number,
  onRequest: (req: IncomingMessage, res: ServerResponse) => void,
  servers: Server[],
  listened: string[],
): Promise<number> {
  for (const [index, host] of hosts.entries()) {
    const server = createServer(onRequest);
    try {
      port = await listen(server, port, host);
      servers.push(server);
      listened.push(host);
    } catch (error) {
      // An optional address (IPv6 loopback on a host without IPv6) is skipped.
      if (index > 0 && isAddressUnavailable(error)) continue;
      throw error;
    }
  }
  return port;
}

/**
 * {@link listenAll}, picking a port anew (up to three tries) when `requestedPort` is 0 and
 * another address has the port the first one picked taken.
 */
async function listenAllWithRetry(
  hosts: string[],
  requestedPort: number,
  onRequest: (req: IncomingMessage, res: ServerResponse) => void,
  servers: Server[],
  listened: string[],
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await listenAll(hosts, requestedPort, onRequest, servers, listened);
    } catch (error) {
      await Promise.all(servers.splice(0).map((s) => closeServer(s)));
      listened.length = 0;
      const retry = requestedPort === 0 && attempt < 3 && (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!retry) throw error;
    }
  }
}

/** The app options that put notes, DPoP replay and revocation in the shared store. */
function sharedAppOptions(shared: DemoSharedState, dpop: StartDemoServerOptions['dpop']): Partial<DemoAppOptions> {
  const replay = { replay: shared.replay };
  return {
    store: shared.notes,
    revocation: shared.revocation,
    // an explicit replay store wins; `false` (Bearer only) stays off
    dpop: dpop === false ? false : dpop === undefined || dpop === true ? replay : { ...replay, ...dpop },
  };
}

/**
 * Starts the demo MCP server. The resource defaults to `http://localhost:<port>/mcp` with the
 * port actually bound, so `port: 0` works. Resolves once every address is listening.
 */
export async function startDemoServer(options: StartDemoServerOptions): Promise<DemoServer> {
  const hosts = options.hosts ?? (options.host !== undefined ? [options.host] : [...DEMO_DEFAULTS.hosts]);
  if (hosts.length === 0) throw new ConfigError(['hosts must name at least one address'], CONFIG_SUBJECT);
  const servers: Server[] = [];
  const listened: string[] = [];
  // The app needs the bound port (default resource), so it is created after listening; a
  // request arriving in between gets a 503 instead of hanging.
  let app: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    if (app) return app(req, res);
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":"starting"}');
  };
  const port = await listenAllWithRetry(hosts, options.port ?? DEMO_DEFAULTS.port, onRequest, servers, listened);

  const resource = options.resource ?? DEMO_DEFAULTS.resource(port);
  let demo: ReturnType<typeof createDemoApp>;
  let shared: DemoSharedState | undefined;
  try {
    const {
      port: _port,
      host: _host,
      hosts: _hosts,
      resource: _resource,
      shutdownTimeoutMs: _grace,
      redisUrl,
      redisPrefix,
      ...appOptions
    } = options;
    if (redisUrl) {
      shared = await connectSharedState(redisUrl, {
        ...(redisPrefix !== undefined && { prefix: redisPrefix }),
        // reconnects are the client's job; each error is one bounded stderr line by default
        onError: options.onError ?? ((e) => process.stderr.write(`demo-mcp-server: redis: ${e.message.slice(0, 300)}\n`)),
      });
    }
    demo = createDemoApp({ ...appOptions, resource, ...(shared && sharedAppOptions(shared, appOptions.dpop)) });
  } catch (error) {
    await Promise.all(servers.map((s) => closeServer(s)));
    await shared?.close();
    throw error;
  }
  app = demo.app;

  const resourceUrl = new URL(demo.resource);
  const servesResourceLocally =
    isLoopbackHost(resourceUrl.hostname) && resourceUrl.protocol === 'http:' && Number(resourceUrl.port || 80) === port;
  const url = servesResourceLocally ? demo.resource : `http://${urlHost(listened[0]!)}:${port}${demo.mcpPath}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    resource: demo.resource,
    port,
    hosts: listened,
    store: demo.store,
    sharedState: shared ? 'redis' : 'memory',
    close() {
      closing ??= (async () => {
        demo.drain();
        await Promise.all(servers.map((s) => closeServer(s, options.shutdownTimeoutMs ?? DEMO_DEFAULTS.shutdownTimeoutMs)));
        await demo.close();
        await shared?.close();
      })();
      return closing;
    },
  };
}
