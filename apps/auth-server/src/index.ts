/**
 * The runnable MCP authorization server: one demo resource, embedded SQLite by default
 * (PostgreSQL with DATABASE_URL), dev switches refused unless the issuer is loopback.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  consoleLogger,
  createAuthorizationServer,
  isLoopbackHost,
  openStore,
  storageConfigFromEnv,
  type AuthorizationServer,
  type AuthorizationServerConfig,
  type Logger,
  type StorageConfig,
  type Store,
} from '@mcp-auth-kit/authorization-server';

export const DEMO_USER = { username: 'demo', password: 'demo-password', displayName: 'Demo User' };
export const DEFAULT_RESOURCE = 'http://localhost:3000/mcp';
export const DEMO_SCOPES = {
  'notes:read': 'Read your notes',
  'notes:write': 'Create and change your notes',
};
const SQLITE_FILE_NAME = 'auth-server.sqlite';

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
  devAutoLogin?: string;
  cimdAllowPrivateNetwork?: boolean;
  /** The protected MCP resource (default `http://localhost:3000/mcp`). */
  resource?: string;
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

function storageFor(options: StartAuthServerOptions): StorageConfig {
  if (options.storage) return options.storage;
  if (options.databaseUrl) return { kind: 'postgres', url: options.databaseUrl };
  return { kind: 'sqlite', file: join(resolve(options.dataDir ?? '.data'), SQLITE_FILE_NAME) };
}

export async function startAuthServer(options: StartAuthServerOptions = {}): Promise<RunningAuthServer> {
  const logger = options.logger ?? consoleLogger('auth-server');
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
  const closeServers = async () => {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((r) => {
            s.closeAllConnections();
            s.close(() => r());
          }),
      ),
    );
  };

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

  let store: Store | undefined;
  let server: AuthorizationServer;
  try {
    const issuerLoopback = isLoopbackHost(new URL(issuer).hostname);
    store = await openStore(storageFor(options));
    const resource = options.resource ?? DEFAULT_RESOURCE;
    const extra = options.authorizationServer ?? {};
    server = await createAuthorizationServer({
      serviceName: 'MCP Auth Kit',
      ...extra,
      issuer,
      resources: extra.resources ?? [{ resource, scopes: DEMO_SCOPES, defaultScopes: ['notes:read'] }],
      storage: store,
      users: [...(issuerLoopback ? [DEMO_USER] : []), ...(extra.users ?? [])],
      // On a loopback dev issuer every client shares one address: keep the DCR brake loose there.
      registration: extra.registration ?? (issuerLoopback ? { rateLimit: { max: 1000, windowSeconds: 3600 } } : undefined),
      devAutoLogin: options.devAutoLogin || extra.devAutoLogin || undefined,
      cimd: { ...extra.cimd, allowPrivateNetwork: !!options.cimdAllowPrivateNetwork || !!extra.cimd?.allowPrivateNetwork },
      logger,
    });
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
      ];
      if (issuerLoopback) lines.push(`  demo login  username "${DEMO_USER.username}", password "${DEMO_USER.password}"`);
      if (options.devAutoLogin) lines.push(`  DEV_AUTO_LOGIN=${options.devAutoLogin}: requests are approved without login (dev only)`);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
  } catch (err) {
    await closeServers();
    await store?.close().catch(() => {});
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
        await closeServers();
        await server.close();
        await store!.close();
      })();
      return closing;
    },
  };
}

export class EnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid environment:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'EnvError';
  }
}

/** Reads the runtime contract's environment variables (see README). */
export function configFromEnv(env: NodeJS.ProcessEnv): StartAuthServerOptions {
  const problems: string[] = [];
  const portText = env.AS_PORT?.trim() || '9000';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 0 || port > 65535) problems.push('AS_PORT must be a port number (0-65535)');
  const issuer = env.AS_ISSUER?.trim() || undefined;
  if (issuer) {
    try {
      new URL(issuer);
    } catch {
      problems.push('AS_ISSUER must be an absolute URL');
    }
  }
  const resource = env.MCP_RESOURCE?.trim() || undefined;
  if (resource) {
    try {
      new URL(resource);
    } catch {
      problems.push('MCP_RESOURCE must be an absolute URL');
    }
  }
  const cimdFlag = env.CIMD_ALLOW_PRIVATE_NETWORK?.trim();
  if (cimdFlag && !['0', '1', 'true', 'false'].includes(cimdFlag)) problems.push('CIMD_ALLOW_PRIVATE_NETWORK must be 1 or 0');
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  let storage: StorageConfig | undefined;
  if (databaseUrl) {
    try {
      storage = storageConfigFromEnv({ DATABASE_URL: databaseUrl, DATABASE_SCHEMA: env.DATABASE_SCHEMA });
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  let authorizationServer: StartAuthServerOptions['authorizationServer'];
  const configFile = env.AS_CONFIG_FILE?.trim();
  if (configFile) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(configFile, 'utf8'));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
      authorizationServer = parsed as StartAuthServerOptions['authorizationServer'];
    } catch (err) {
      // Never echo parser messages: they quote the file, which may hold passwords.
      const reason = err instanceof SyntaxError ? 'invalid JSON' : (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      problems.push(`AS_CONFIG_FILE: cannot read ${configFile} (${reason})`);
    }
  }
  const host = env.AS_HOST?.trim() || undefined;
  const trustProxyFlag = env.TRUST_PROXY?.trim();
  if (trustProxyFlag && !['0', '1', 'true', 'false'].includes(trustProxyFlag)) problems.push('TRUST_PROXY must be 1 or 0');
  if (trustProxyFlag === '1' || trustProxyFlag === 'true') authorizationServer = { ...authorizationServer, trustProxy: true };
  if (problems.length) throw new EnvError(problems);
  return {
    host,
    authorizationServer,
    port,
    issuer,
    dataDir: env.DATA_DIR?.trim() || '.data',
    databaseUrl: storage?.kind === 'postgres' ? databaseUrl : undefined,
    storage,
    devAutoLogin: env.DEV_AUTO_LOGIN?.trim() || undefined,
    cimdAllowPrivateNetwork: cimdFlag === '1' || cimdFlag === 'true',
    resource,
  };
}

export { runAdmin, adminStorage, ADMIN_USAGE, type AdminIo } from './admin.js';
