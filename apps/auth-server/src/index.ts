/**
 * The runnable MCP authorization server: one demo resource, embedded SQLite by default
 * (PostgreSQL with DATABASE_URL), dev switches refused unless it listens on loopback only, outside
 * production, with a loopback issuer (dev-switches.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createAuthorizationServer,
  openStore,
  pinoLogger,
  storageConfigFromEnv,
  StorageError,
  type AuthorizationServer,
  type AuthorizationServerConfig,
  type Logger,
  type StorageConfig,
  type Store,
} from '@mcp-auth-kit/authorization-server';
import { behindProxy, devSwitchProblems, exposedListenHost, storageProblems } from '@mcp-auth-kit/authorization-server/ops';
import { ConfigError, isLoopbackHost } from '@mcp-auth-kit/protocol';
import { DEFAULT_RESOURCE_WARNING, loadConfig, type LogLevel } from './config.js';
import { APP_DEFAULTS, resourcesOf } from './defaults.js';
import { DEMO_USER, demoAccountProblems } from './demo-user.js';
import { APP_DEV_SWITCHES, listenHostsOf } from './dev-switches.js';
import { connectRevocationSignal, longestAccessTokenTtl, type RevocationSignal } from './revocation-signal.js';

export { DEMO_USER };
export { DEFAULT_RESOURCE, DEMO_SCOPES } from './defaults.js';

export interface StartAuthServerOptions {
  /** Port to listen on (0 = any free port). Default 9000. */
  port?: number;
  /** Address to listen on. Default: loopback only (127.0.0.1 and ::1). */
  host?: string;
  /** Issuer; default `http://localhost:<port>`. */
  issuer?: string;
  /** Folder of the SQLite file (default `.data`). */
  dataDir?: string;
  /** PostgreSQL connection URL (instead of SQLite). */
  databaseUrl?: string;
  /** PostgreSQL schema with `databaseUrl` (default `mcp_auth_kit`). */
  databaseSchema?: string;
  /**
   * Production mode (NODE_ENV=production): dev switches (the demo user included), the memory
   * store, non-loopback http issuers and a loopback http issuer on an address reachable from
   * outside are refused.
   */
  production?: boolean;
  /**
   * Seed the demo user `demo` / `demo-password` (default: on when listening on loopback only,
   * with a loopback issuer, outside production; `true` is refused anywhere else).
   */
  demoUser?: boolean;
  /** Level of the default JSON logger (default `info`). */
  logLevel?: LogLevel;
  /** On close: how long in-flight requests may run before their connections are cut (default 5000 ms). */
  shutdownTimeoutMs?: number;
  /** Dev only (refused unless listening on loopback only, outside production, with a loopback issuer). */
  devAutoLogin?: string;
  /** Dev only, as `devAutoLogin`: CIMD may fetch documents from loopback and private addresses. */
  cimdAllowPrivateNetwork?: boolean;
  /** The protected MCP resource (default `http://localhost:3000/mcp`). */
  resource?: string;
  /**
   * Redis URL (`REDIS_URL`): every revoked grant is published there for resource servers
   * (`@mcp-auth-kit/resource-server/redis`). Default: none (they learn it by introspection or expiry).
   */
  redisUrl?: string;
  /** Key and channel prefix (`REDIS_PREFIX`, default `mcp-auth-kit:`), the same as the resource servers'. */
  redisPrefix?: string;
  /**
   * How often the revocation records in the store are written to Redis again, so a Redis that
   * lost its data (flush, restart without persistence) is refilled (default 30 000 ms; a
   * reconnect refills at once).
   */
  redisRepublishIntervalMs?: number;
  /** Explicit storage (wins over dataDir / databaseUrl). */
  storage?: StorageConfig;
  logger?: Logger;
  /**
   * Anything else of the authorization server's configuration (pre-registered clients, more
   * resources, users, registration / CIMD policy, TTLs…), merged over the defaults above.
   */
  authorizationServer?: Partial<Omit<AuthorizationServerConfig, 'issuer' | 'storage'>>;
  /** Print the start-up banner (URLs, demo credentials) to stdout. Default false. */
  banner?: boolean;
}

export interface RunningAuthServer {
  issuer: string;
  /** Base URL the server listens on. */
  url: string;
  port: number;
  server: AuthorizationServer;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolvePromise();
    });
  });
}

/** The store of these options, read by the one storage rule of the runtime contract. */
export function storageFor(options: StartAuthServerOptions): StorageConfig {
  if (options.storage) return options.storage;
  return storageConfigFromEnv({ DATABASE_URL: options.databaseUrl, DATABASE_SCHEMA: options.databaseSchema, DATA_DIR: options.dataDir });
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The HTTP servers of one start: made before the AS exists (503 until then), closed together. */
function listeners() {
  const servers: Server[] = [];
  const state: { handler: Handler } = {
    handler: (_req, res) => {
      res.statusCode = 503;
      res.setHeader('retry-after', '1');
      res.end();
    },
  };
  const make = () => {
    const s = createServer((req, res) => state.handler(req, res));
    servers.push(s);
    return s;
  };
  const close = async (graceMs = 0) => {
    // Stop accepting, let in-flight requests finish (idle keep-alive sockets are closed as
    // they become idle), and cut whatever is still open after the grace period.
    const closed = Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    const sweep = setInterval(() => {
      for (const s of servers) s.closeIdleConnections();
    }, 50);
    for (const s of servers) s.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((r) => {
      timer = setTimeout(r, graceMs);
    });
    await Promise.race([closed, timeout]);
    clearInterval(sweep);
    clearTimeout(timer);
    for (const s of servers) s.closeAllConnections();
    await closed;
  };
  return { servers, state, make, close };
}

/** Listens on `host`, or on both loopback addresses; returns the port (port 0 resolved). */
async function listenAll(options: StartOptions, l: ReturnType<typeof listeners>, logger: Logger): Promise<number> {
  let port = options.port;
  const [v4Host, v6Host] = APP_DEFAULTS.listenHosts;
  if (options.host) {
    const s = l.make();
    await listen(s, port, options.host);
    return (s.address() as AddressInfo).port;
  }
  const v4 = l.make();
  await listen(v4, port, v4Host);
  port = (v4.address() as AddressInfo).port;
  try {
    await listen(l.make(), port, v6Host);
  } catch {
    l.servers.pop();
    logger.info('IPv6 loopback (::1) unavailable; listening on 127.0.0.1 only');
  }
  return port;
}

function devSettingsOf(options: StartOptions) {
  const extra = options.authorizationServer;
  return {
    devAutoLogin: options.devAutoLogin || extra.devAutoLogin || undefined,
    cimd: { ...extra.cimd, allowPrivateNetwork: !!options.cimdAllowPrivateNetwork || !!extra.cimd?.allowPrivateNetwork },
    demoUser: options.demoUser,
  };
}

/**
 * What is refused before anything listens, in one ConfigError: the dev switches (who can
 * connect is decided by the listen address, not the issuer; checked again on the addresses
 * actually bound) and the store (every problem of it, found before it is opened).
 */
function problemsBeforeListening(options: StartOptions, production: boolean | undefined): string[] {
  const problems = devSwitchProblems(APP_DEV_SWITCHES, devSettingsOf(options), {
    production,
    listenHosts: listenHostsOf(options.host),
    behindProxy: behindProxy(options.authorizationServer.trustProxy),
  });
  try {
    problems.push(...storageProblems(storageFor(options)));
  } catch (err) {
    // storageConfigFromEnv's refusal of DATABASE_URL (never echoing it)
    if (err instanceof StorageError && err.code === 'misconfigured') problems.push(err.message);
    else throw err;
  }
  return problems;
}

interface Bound {
  issuer: string;
  listenHosts: string[];
  production: boolean | undefined;
  /** Loopback issuer and every listen address loopback. */
  local: boolean;
  seedDemoUser: boolean;
}

/** What the app gives `createAuthorizationServer`: the demo resource and the caller's options. */
function serverConfig(options: StartOptions, bound: Bound, store: Store, logger: Logger): AuthorizationServerConfig {
  const extra = options.authorizationServer;
  const devSettings = devSettingsOf(options);
  return {
    serviceName: APP_DEFAULTS.serviceName,
    ...extra,
    issuer: bound.issuer,
    resources: resourcesOf(extra, options.resource),
    storage: store,
    users: [...(bound.seedDemoUser ? [{ ...DEMO_USER, source: 'demo' as const }] : []), ...(extra.users ?? [])],
    production: bound.production,
    listenHosts: bound.listenHosts,
    registration: extra.registration ?? (bound.local ? APP_DEFAULTS.localRegistration() : undefined),
    devAutoLogin: devSettings.devAutoLogin,
    cimd: devSettings.cimd,
    logger,
  };
}

/**
 * Wherever the demo account is not seeded by default, an account left from development with
 * the public password stops the start (checked on the store the server will use).
 */
async function demoAccountRefusal(store: Store, bound: Bound, exposedHost: string | undefined): Promise<string[]> {
  if (!bound.production && bound.local) return [];
  const where = bound.production
    ? 'in production'
    : exposedHost !== undefined
      ? `while listening on ${exposedHost}, which is reachable from outside`
      : `for the non-loopback issuer ${bound.issuer}`;
  return demoAccountProblems(store, where);
}

function printBanner(options: StartOptions, url: string, bound: Bound, store: Store, signal: RevocationSignal | undefined) {
  const { issuer } = bound;
  const resources = resourcesOf(options.authorizationServer, options.resource);
  const lines = [
    `authorization server listening on ${url}`,
    `  issuer      ${issuer}`,
    `  metadata    ${issuer.replace(/\/$/, '')}/.well-known/oauth-authorization-server`,
    ...resources.map((r) => `  resource    ${r.resource} (scopes: ${Object.keys(r.scopes).join(', ')})`),
    `  storage     ${store.kind}`,
    ...(signal ? ['  revocation  published to Redis (REDIS_URL) for resource servers'] : []),
  ];
  if (bound.seedDemoUser) lines.push(`  demo login  username "${DEMO_USER.username}", password "${DEMO_USER.password}"`);
  if (options.devAutoLogin) lines.push(`  DEV_AUTO_LOGIN=${options.devAutoLogin}: requests are approved without login (dev only)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The bound addresses decide what is local; the dev switches are judged again on them. */
function bind(options: StartOptions, servers: Server[], port: number): Bound & { exposedHost: string | undefined } {
  const production = options.production ?? options.authorizationServer.production;
  const issuer = options.issuer ?? APP_DEFAULTS.issuer(port);
  // The addresses the sockets are bound to (a name such as `localhost` resolved by the system).
  const listenHosts = servers.map((s) => (s.address() as AddressInfo).address);
  const exposedHost = exposedListenHost(listenHosts);
  const proxied = behindProxy(options.authorizationServer.trustProxy);
  const refused = devSwitchProblems(APP_DEV_SWITCHES, devSettingsOf(options), { production, issuer, listenHosts, behindProxy: proxied });
  if (refused.length) throw new ConfigError(refused);
  // An issuer that is no URL is not local; createAuthorizationServer reports it with the rest (a ConfigError, not a TypeError).
  // Behind a proxy requests come from wherever it takes them: not local either.
  const local = URL.canParse(issuer) && isLoopbackHost(new URL(issuer).hostname) && exposedHost === undefined && !proxied;
  const seedDemoUser = options.demoUser ?? (local && !production);
  return { issuer, listenHosts, production, local, seedDemoUser, exposedHost };
}

/** The options with the app's defaults (defaults.ts) filled in: what the start reads. */
type StartOptions = StartAuthServerOptions &
  Required<Pick<StartAuthServerOptions, 'port' | 'logLevel' | 'shutdownTimeoutMs' | 'authorizationServer'>>;

function withAppDefaults(options: StartAuthServerOptions): StartOptions {
  return {
    ...options,
    port: options.port ?? APP_DEFAULTS.port,
    logLevel: options.logLevel ?? APP_DEFAULTS.logLevel,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? APP_DEFAULTS.shutdownTimeoutMs,
    authorizationServer: options.authorizationServer ?? {},
  };
}

export async function startAuthServer(given: StartAuthServerOptions = {}): Promise<RunningAuthServer> {
  const options = withAppDefaults(given);
  const logger = options.logger ?? pinoLogger({ level: options.logLevel, name: 'auth-server' });
  const extra = options.authorizationServer;
  const early = problemsBeforeListening(options, options.production ?? extra.production);
  if (early.length) throw new ConfigError(early);

  // Listen first so that port 0 is resolved before the issuer is built.
  const l = listeners();
  const port = await listenAll(options, l, logger);
  const listenHost = options.host ?? APP_DEFAULTS.listenHosts[0];
  const url = `http://${listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${port}`;

  let store: Store | undefined;
  let server: AuthorizationServer;
  let signal: RevocationSignal | undefined;
  let bound: Bound;
  try {
    bound = bind(options, l.servers, port);
    if (options.production && !options.resource && !extra.resources) logger.warn(DEFAULT_RESOURCE_WARNING);
    if (options.redisUrl) {
      signal = await connectRevocationSignal(options.redisUrl, options.redisPrefix, longestAccessTokenTtl(extra), logger, {
        ...(options.redisRepublishIntervalMs !== undefined && { republishIntervalMs: options.redisRepublishIntervalMs }),
      });
    }
    store = await openStore(storageFor(options), signal ? { onGrantRevoked: signal.publish } : {});
    signal?.useStore(store);
    server = await createAuthorizationServer(serverConfig(options, bound, store, logger));
    const refused = await demoAccountRefusal(store, bound, exposedListenHost(bound.listenHosts));
    if (refused.length) {
      await server.close();
      throw new ConfigError(refused);
    }
    l.state.handler = server.app as unknown as Handler;
    if (options.banner) printBanner(options, url, bound, store, signal);
  } catch (err) {
    await l.close();
    await store?.close().catch(() => {});
    await signal?.close();
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    issuer: bound.issuer,
    url,
    port,
    server,
    close() {
      closing ??= (async () => {
        server.drain();
        await l.close(options.shutdownTimeoutMs);
        await server.close();
        await store!.close();
        await signal?.close();
      })();
      return closing;
    },
  };
}

/**
 * Reads the runtime contract's environment variables and `AS_CONFIG_FILE` (JSON or YAML; the
 * environment wins), validates everything the server will be given, and throws one ConfigError
 * listing every problem (see README, "Configuration reference").
 */
export function configFromEnv(env: NodeJS.ProcessEnv): StartAuthServerOptions {
  const { config, problems } = loadConfig(env);
  if (problems.length) throw new ConfigError(problems);
  return {
    host: config.host,
    authorizationServer: config.authorizationServer,
    port: config.port,
    issuer: config.issuer,
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    databaseSchema: config.databaseSchema,
    storage: config.storage,
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    devAutoLogin: config.devAutoLogin,
    cimdAllowPrivateNetwork: config.cimdAllowPrivateNetwork,
    resource: config.resource,
    production: config.production,
    demoUser: config.demoUser,
    logLevel: config.logLevel,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
  };
}

export { ConfigError };
export { loadConfig, printableConfig, APP_FILE_KEYS, AS_FILE_KEYS, type LoadedConfig } from './config.js';
export { runAdmin, adminStorage, ADMIN_USAGE, type AdminIo } from './admin.js';
export { APP_DEV_SWITCHES, DEMO_USER_SWITCH, type AppDevSettings } from './dev-switches.js';
