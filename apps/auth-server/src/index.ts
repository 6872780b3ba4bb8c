/**
 * The runnable MCP authorization server: one demo resource, embedded SQLite by default
 * (PostgreSQL with DATABASE_URL), dev switches refused unless it listens on loopback only, outside
 * production, with a loopback issuer (dev-switches.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createAuthorizationServer,
  devSwitchProblems,
  exposedListenHost,
  openStore,
  pinoLogger,
  storageConfigFromEnv,
  type AuthorizationServer,
  type AuthorizationServerConfig,
  type Logger,
  type StorageConfig,
  type Store,
} from '@mcp-auth-kit/authorization-server';
import { ConfigError, isLoopbackHost } from '@mcp-auth-kit/protocol';
import { DEFAULT_RESOURCE, DEFAULT_RESOURCE_WARNING, loadConfig, type LogLevel } from './config.js';
import { DEMO_USER, demoAccountProblems } from './demo-user.js';
import { APP_DEV_SWITCHES, listenHostsOf } from './dev-switches.js';
import { connectRevocationSignal, longestAccessTokenTtl, type RevocationSignal } from './revocation-signal.js';

export { DEMO_USER, DEFAULT_RESOURCE };
export const DEMO_SCOPES = {
  'notes:read': 'Read your notes',
  'notes:write': 'Create and change your notes',
};

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

export async function startAuthServer(options: StartAuthServerOptions = {}): Promise<RunningAuthServer> {
  const logger = options.logger ?? pinoLogger({ level: options.logLevel ?? 'info', name: 'auth-server' });
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.setHeader('retry-after', '1');
    res.end();
  };
  const servers: Server[] = [];
  const make = () => {
    const s = createServer((req, res) => handler(req, res));
    servers.push(s);
    return s;
  };
  const closeServers = async (graceMs = 0) => {
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

  const extra = options.authorizationServer ?? {};
  const production = options.production ?? extra.production;
  const devSettings = {
    devAutoLogin: options.devAutoLogin || extra.devAutoLogin || undefined,
    cimd: { ...extra.cimd, allowPrivateNetwork: !!options.cimdAllowPrivateNetwork || !!extra.cimd?.allowPrivateNetwork },
    demoUser: options.demoUser,
  };
  // Refused before anything listens: who can connect is decided by the listen address, not the
  // issuer (checked again below on the addresses actually bound, and by the issuer).
  const early = devSwitchProblems(APP_DEV_SWITCHES, devSettings, { production, listenHosts: listenHostsOf(options.host) });
  if (early.length) throw new ConfigError(early);

  // Listen first so that port 0 is resolved before the issuer is built.
  let port = options.port ?? 9000;
  if (options.host) {
    const s = make();
    await listen(s, port, options.host);
    port = (s.address() as AddressInfo).port;
  } else {
    const v4 = make();
    await listen(v4, port, '127.0.0.1');
    port = (v4.address() as AddressInfo).port;
    try {
      await listen(make(), port, '::1');
    } catch {
      servers.pop();
      logger.info('IPv6 loopback (::1) unavailable; listening on 127.0.0.1 only');
    }
  }
  const listenHost = options.host ?? '127.0.0.1';
  const url = `http://${listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${port}`;
  const issuer = options.issuer ?? `http://localhost:${port}`;
  // The addresses the sockets are bound to (a name such as `localhost` resolved by the system).
  const listenHosts = servers.map((s) => (s.address() as AddressInfo).address);
  const exposedHost = exposedListenHost(listenHosts);

  let store: Store | undefined;
  let server: AuthorizationServer;
  let signal: RevocationSignal | undefined;
  try {
    const issuerLoopback = isLoopbackHost(new URL(issuer).hostname);
    const refused = devSwitchProblems(APP_DEV_SWITCHES, devSettings, { production, issuer, listenHosts });
    if (refused.length) throw new ConfigError(refused);
    const local = issuerLoopback && exposedHost === undefined;
    const seedDemoUser = options.demoUser ?? (local && !production);
    const resource = options.resource ?? DEFAULT_RESOURCE;
    if (options.production && !options.resource && !extra.resources) logger.warn(DEFAULT_RESOURCE_WARNING);
    if (options.redisUrl) {
      signal = await connectRevocationSignal(options.redisUrl, options.redisPrefix, longestAccessTokenTtl(extra), logger, {
        ...(options.redisRepublishIntervalMs !== undefined && { republishIntervalMs: options.redisRepublishIntervalMs }),
      });
    }
    store = await openStore(storageFor(options), signal ? { onGrantRevoked: signal.publish } : {});
    signal?.useStore(store);
    server = await createAuthorizationServer({
      serviceName: 'MCP Auth Kit',
      ...extra,
      issuer,
      // `name`: the demo MCP server's PRM resource_name, shown on the consent page.
      resources: extra.resources ?? [{ resource, name: 'Demo notes', scopes: DEMO_SCOPES, defaultScopes: ['notes:read'] }],
      storage: store,
      users: [...(seedDemoUser ? [{ ...DEMO_USER, source: 'demo' as const }] : []), ...(extra.users ?? [])],
      production,
      listenHosts,
      // On a local dev server every client shares one address: keep the DCR brake loose there
      // (not where others can connect: they would get the loose brake too).
      registration: extra.registration ?? (local ? { rateLimit: { max: 1000, windowSeconds: 3600 } } : undefined),
      devAutoLogin: devSettings.devAutoLogin,
      cimd: devSettings.cimd,
      logger,
    });
    // Checked on the store the server will use, before it serves anything (requests get 503
    // until then): wherever the demo account is not seeded by default, an account left from
    // development with the public password stops the start.
    if (production || !local) {
      const where = production
        ? 'in production'
        : exposedHost !== undefined
          ? `while listening on ${exposedHost}, which is reachable from outside`
          : `for the non-loopback issuer ${issuer}`;
      const problems = await demoAccountProblems(store, where);
      if (problems.length) {
        await server.close();
        throw new ConfigError(problems);
      }
    }
    handler = server.app as unknown as typeof handler;
    if (options.banner) {
      const lines = [
        `authorization server listening on ${url}`,
        `  issuer      ${issuer}`,
        `  metadata    ${issuer.replace(/\/$/, '')}/.well-known/oauth-authorization-server`,
        ...(extra.resources ?? [{ resource, scopes: DEMO_SCOPES }]).map(
          (r) => `  resource    ${r.resource} (scopes: ${Object.keys(r.scopes).join(', ')})`,
        ),
        `  storage     ${store.kind}`,
        ...(signal ? ['  revocation  published to Redis (REDIS_URL) for resource servers'] : []),
      ];
      if (seedDemoUser) lines.push(`  demo login  username "${DEMO_USER.username}", password "${DEMO_USER.password}"`);
      if (options.devAutoLogin) lines.push(`  DEV_AUTO_LOGIN=${options.devAutoLogin}: requests are approved without login (dev only)`);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
  } catch (err) {
    await closeServers();
    await store?.close().catch(() => {});
    await signal?.close();
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    issuer,
    url,
    port,
    server,
    close() {
      closing ??= (async () => {
        server.drain();
        await closeServers(options.shutdownTimeoutMs ?? 5_000);
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
