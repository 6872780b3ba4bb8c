/**
 * The app's one configuration reference: a config file (`AS_CONFIG_FILE`, JSON or YAML) and
 * environment variables (which win over the file), validated at start-up with every problem
 * listed at once, and printable with secrets masked (`--print-config`).
 */
import { readFileSync } from 'node:fs';
import { ConfigError, isLoopbackHost } from '@mcp-auth-kit/protocol';
import { parse as parseYaml } from 'yaml';
import { storageConfigFromEnv, type AuthorizationServerConfig, type StorageConfig } from '@mcp-auth-kit/authorization-server';
import { behindProxy, DEFAULTS, devSwitchProblems, exposedListenHost, validateConfig } from '@mcp-auth-kit/authorization-server/ops';
import { APP_DEFAULTS, resourcesOf } from './defaults.js';
import { DEMO_USER_SWITCH, listenHostsOf } from './dev-switches.js';

/** RFC 8693 §2.1. */
const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/**
 * Production mode on the demo resource. Not refused: it is not unsafe (no deployed MCP server
 * is that audience) and production mode refuses only what is (dev switches, the memory store),
 * as it accepts a loopback issuer (the compose demo stack). But on a server it is almost surely
 * a forgotten setting: every token would be useless.
 */
export const DEFAULT_RESOURCE_WARNING =
  `MCP_RESOURCE is not set, so tokens are issued for the demo resource ${APP_DEFAULTS.resource}, which no deployed MCP server is: ` +
  "set MCP_RESOURCE (or `resources` in AS_CONFIG_FILE) to your MCP server's public URL";

/** Settings that start, but are probably wrong: printed by `--print-config`, logged at start. */
export function configWarnings(config: LoadedConfig): string[] {
  const onDemoResource = !config.resource && !config.authorizationServer?.resources;
  return config.production && onDemoResource ? [DEFAULT_RESOURCE_WARNING] : [];
}

/** Whether the demo user is seeded, and why: the rule of startAuthServer, told as it applies. */
function demoUserSetting(config: LoadedConfig): boolean | string {
  if (config.demoUser !== undefined) return config.demoUser;
  if (config.production) return 'off (auto: production mode)';
  const exposed = exposedListenHost(listenHostsOf(config.host));
  if (exposed !== undefined) return `off (auto: listening on ${exposed}, which is reachable from outside)`;
  let loopback = false;
  try {
    loopback = isLoopbackHost(new URL(config.issuer ?? APP_DEFAULTS.issuer(config.port)).hostname);
  } catch {
    // an invalid issuer is reported as a problem
  }
  return loopback ? 'on (auto: loopback issuer and listen addresses, not production)' : 'off (auto: the issuer is not on a loopback host)';
}

/** Server-level keys of the config file (each also has an environment variable). */
export const APP_FILE_KEYS = {
  port: 'AS_PORT',
  host: 'AS_HOST',
  issuer: 'AS_ISSUER',
  resource: 'MCP_RESOURCE',
  dataDir: 'DATA_DIR',
  databaseUrl: 'DATABASE_URL',
  databaseSchema: 'DATABASE_SCHEMA',
  redisUrl: 'REDIS_URL',
  redisPrefix: 'REDIS_PREFIX',
  devAutoLogin: 'DEV_AUTO_LOGIN',
  cimdAllowPrivateNetwork: 'CIMD_ALLOW_PRIVATE_NETWORK',
  demoUser: 'AS_DEMO_USER',
  logLevel: 'LOG_LEVEL',
  shutdownTimeoutMs: 'SHUTDOWN_TIMEOUT_MS',
} as const;

/** Keys of the file passed to the authorization server (see the package README). */
export const AS_FILE_KEYS = [
  'resources',
  'clients',
  'users',
  'registration',
  'cimd',
  'accessTokenTTL',
  'refreshTokens',
  'sessionTTL',
  'trustProxy',
  'serviceName',
  'metrics',
  'readinessTimeoutMs',
  'upstream',
  'loginThrottle',
  'dpop',
  'idJag',
  'thirdParty',
  'audit',
  'console',
] as const;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoadedConfig {
  port: number;
  host?: string;
  issuer?: string;
  resource?: string;
  dataDir: string;
  databaseUrl?: string;
  databaseSchema?: string;
  storage?: StorageConfig;
  /** Redis for the revocation signal to resource servers (opt-in). */
  redisUrl?: string;
  redisPrefix?: string;
  devAutoLogin?: string;
  cimdAllowPrivateNetwork: boolean;
  /** Seed `demo` / `demo-password` (default: loopback issuer and listen addresses, not production; dev-only). */
  demoUser?: boolean;
  production: boolean;
  logLevel: LogLevel;
  shutdownTimeoutMs: number;
  authorizationServer?: Partial<Omit<AuthorizationServerConfig, 'issuer' | 'storage'>>;
  /** Where each setting came from, for `--print-config`. */
  configFile?: string;
}

const FLAGS = ['0', '1', 'true', 'false'];

/**
 * TRUST_PROXY: `0`/`false` off; a number = that many proxies in front (`1`/`true` = one, the
 * immediate peer); otherwise a comma-separated list of the proxies' addresses/CIDRs (checked by
 * the authorization server's configuration check).
 */
function trustProxyFromEnv(text: string): boolean | number | string[] | undefined {
  if (text === 'false') return false;
  if (text === 'true') return true;
  if (/^\d+$/.test(text)) return Number(text);
  const list = text.split(',').map((s) => s.trim());
  return list.every((s) => /^[0-9a-fA-F.:/]+$|^(loopback|linklocal|uniquelocal)$/.test(s)) ? list : undefined;
}
function flag(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  return value === '1' || value === 'true';
}

/** Reads the file as YAML (a superset of JSON); never echoes parser messages (they quote the file). */
function readConfigFile(file: string, problems: string[]): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    problems.push(`AS_CONFIG_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    const line = (err as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    const kind = /\.json$/i.test(file) ? 'invalid JSON' : `invalid YAML${line ? ` near line ${line}` : ''}`;
    problems.push(`AS_CONFIG_FILE: cannot read ${file} (${kind})`);
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.push(`AS_CONFIG_FILE: cannot read ${file} (not an object of settings)`);
    return undefined;
  }
  return parsed as Record<string, unknown>;
}

function isAbsoluteUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

type Setting = (key: keyof typeof APP_FILE_KEYS) => string | undefined;

/** The config file's keys, checked, and the app's settings read environment first, then the file. */
function fileAndSetting(env: NodeJS.ProcessEnv, problems: string[]) {
  const configFile = env.AS_CONFIG_FILE?.trim() || undefined;
  const file = configFile ? (readConfigFile(configFile, problems) ?? {}) : {};
  const known = new Set<string>([...Object.keys(APP_FILE_KEYS), ...AS_FILE_KEYS]);
  for (const key of Object.keys(file)) {
    if (!known.has(key)) problems.push(`AS_CONFIG_FILE: unknown key "${key}" (known: ${[...known].join(', ')})`);
  }
  const fileString = (key: keyof typeof APP_FILE_KEYS): string | undefined => {
    const value = file[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    problems.push(`AS_CONFIG_FILE: ${key} must be a string, number or boolean`);
    return undefined;
  };
  /** Environment first, then the file. */
  const setting: Setting = (key) => env[APP_FILE_KEYS[key]]?.trim() || fileString(key)?.trim() || undefined;
  return { configFile, file, setting };
}

/** The app's own scalar settings (port, URLs, flags, log level, shutdown), each checked. */
function appSettings(setting: Setting, env: NodeJS.ProcessEnv, problems: string[]) {
  const portText = setting('port') ?? String(APP_DEFAULTS.port);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 0 || port > 65535) problems.push('AS_PORT must be a port number (0-65535)');
  let issuer = setting('issuer');
  if (issuer && !isAbsoluteUrl(issuer)) {
    problems.push('AS_ISSUER must be an absolute URL, e.g. https://auth.example.com');
    issuer = undefined;
  }
  let resource = setting('resource');
  if (resource && !isAbsoluteUrl(resource)) {
    problems.push('MCP_RESOURCE must be an absolute URL, e.g. https://mcp.example.com/mcp');
    resource = undefined;
  }
  const cimdFlag = setting('cimdAllowPrivateNetwork');
  if (cimdFlag && !FLAGS.includes(cimdFlag)) problems.push('CIMD_ALLOW_PRIVATE_NETWORK must be 1 or 0');
  const demoFlag = setting('demoUser');
  if (demoFlag && !FLAGS.includes(demoFlag)) problems.push('AS_DEMO_USER must be 1 or 0');
  const metricsFlagText = env.METRICS?.trim();
  if (metricsFlagText && !FLAGS.includes(metricsFlagText)) problems.push('METRICS must be 1 or 0');
  const trustProxyText = env.TRUST_PROXY?.trim();
  if (trustProxyText && trustProxyFromEnv(trustProxyText) === undefined) {
    problems.push('TRUST_PROXY must be 0, the number of proxies in front (e.g. 1), or their addresses/CIDRs (e.g. 10.0.0.0/8,::1)');
  }
  const logLevel = (setting('logLevel') ?? APP_DEFAULTS.logLevel).toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const shutdownText = setting('shutdownTimeoutMs') ?? String(APP_DEFAULTS.shutdownTimeoutMs);
  const shutdownTimeoutMs = Number(shutdownText);
  if (!/^\d+$/.test(shutdownText) || shutdownTimeoutMs < 1) problems.push('SHUTDOWN_TIMEOUT_MS must be a positive number of milliseconds');
  return { port, issuer, resource, cimdFlag, demoFlag, logLevel: logLevel as LogLevel, shutdownTimeoutMs };
}

/** DATABASE_URL / DATABASE_SCHEMA (env or file) → the store; its problems are listed, never thrown. */
function storageSetting(setting: Setting, problems: string[]) {
  const databaseUrl = setting('databaseUrl');
  const databaseSchema = setting('databaseSchema');
  let storage: StorageConfig | undefined;
  if (databaseUrl) {
    try {
      storage = storageConfigFromEnv({ DATABASE_URL: databaseUrl, DATABASE_SCHEMA: databaseSchema });
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  return { databaseUrl, databaseSchema, storage };
}

type AsOptions = LoadedConfig['authorizationServer'];

/** RFC 9449: one nonce secret for every instance behind a balancer; nonce policy at /token. */
function withDpopEnv(as: AsOptions, env: NodeJS.ProcessEnv, problems: string[]): AsOptions {
  const nonceSecret = env.DPOP_NONCE_SECRET?.trim() || undefined;
  const requireNonce = env.DPOP_REQUIRE_NONCE?.trim() || undefined;
  if (requireNonce && !FLAGS.includes(requireNonce)) problems.push('DPOP_REQUIRE_NONCE must be 1 or 0');
  if (!nonceSecret && !requireNonce) return as;
  return {
    ...as,
    dpop: { ...as?.dpop, ...(nonceSecret ? { nonceSecret } : {}), ...(requireNonce ? { requireNonce: flag(requireNonce) } : {}) },
  };
}

/** MCP enterprise-managed authorization: one trusted IdP from the environment, added to the file's. */
function withIdJagEnv(as: AsOptions, env: NodeJS.ProcessEnv, problems: string[]): AsOptions {
  const issuer = env.ID_JAG_ISSUER?.trim();
  if (!issuer) {
    if (env.ID_JAG_JWKS_URI?.trim() || env.ID_JAG_CLIENTS?.trim() || env.ID_JAG_ACCOUNT_MATCH?.trim())
      problems.push('ID_JAG_JWKS_URI, ID_JAG_CLIENTS and ID_JAG_ACCOUNT_MATCH need ID_JAG_ISSUER');
    return as;
  }
  const match = env.ID_JAG_ACCOUNT_MATCH?.trim();
  const idp = {
    issuer,
    jwksUri: env.ID_JAG_JWKS_URI?.trim() || undefined,
    clients: (env.ID_JAG_CLIENTS ?? '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean),
    ...(match ? { accountMatch: match as 'subject' | 'email' } : {}),
  };
  const listed = (as?.idJag?.trustedIdps ?? []).filter((t) => t?.issuer !== issuer);
  return { ...as, idJag: { ...as?.idJag, trustedIdps: [...listed, idp] } };
}

/**
 * Third-party authorization (the token vault): THIRD_PARTY_PROVIDERS_FILE, a JSON object of
 * providers by name (each added over the file's `thirdParty.providers` of the same name), and
 * THIRD_PARTY_ENCRYPTION_KEY (`thirdParty.encryptionKey`). The providers file is never quoted in
 * an error (it holds client secrets).
 */
function withThirdPartyEnv(as: AsOptions, env: NodeJS.ProcessEnv, problems: string[]): AsOptions {
  const file = env.THIRD_PARTY_PROVIDERS_FILE?.trim();
  const key = env.THIRD_PARTY_ENCRYPTION_KEY?.trim();
  if (!file && !key) return as;
  let providers: Record<string, unknown> = {};
  if (file) {
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TypeError('not an object');
      providers = parsed as Record<string, unknown>;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      problems.push(
        `THIRD_PARTY_PROVIDERS_FILE: cannot read ${file} (${code ?? 'not a JSON object of providers by name: { "drive": { "issuer": …, "clientId": … } }'})`,
      );
      return as;
    }
  }
  const thirdParty = as?.thirdParty;
  const merged = { ...thirdParty?.providers, ...providers } as NonNullable<NonNullable<AsOptions>['thirdParty']>['providers'];
  if (Object.keys(merged).length === 0) {
    problems.push(
      'third-party authorization needs providers: THIRD_PARTY_PROVIDERS_FILE (a JSON object of providers by name), or thirdParty.providers in AS_CONFIG_FILE',
    );
    return as;
  }
  return { ...as, thirdParty: { ...thirdParty, providers: merged, ...(key ? { encryptionKey: key } : {}) } };
}

/**
 * The MCP server's own confidential client for the RFC 8693 token exchange: MCP_CLIENT_ID and
 * MCP_CLIENT_SECRET add a configured client whose `resource` is MCP_RESOURCE (the demo resource
 * when unset), the same two names the demo MCP server reads for its side of the exchange.
 */
function withMcpClientEnv(as: AsOptions, env: NodeJS.ProcessEnv, problems: string[]): AsOptions {
  const clientId = env.MCP_CLIENT_ID?.trim();
  const clientSecret = env.MCP_CLIENT_SECRET?.trim();
  if (!clientId && !clientSecret) return as;
  if (!clientId || !clientSecret) {
    problems.push("MCP_CLIENT_ID and MCP_CLIENT_SECRET go together (the MCP server's client for the token exchange)");
    return as;
  }
  const client = {
    client_id: clientId,
    client_secret: clientSecret,
    resource: env.MCP_RESOURCE?.trim() || APP_DEFAULTS.resource,
    grant_types: [TOKEN_EXCHANGE_GRANT],
    response_types: [],
    redirect_uris: [],
  };
  const listed = (as?.clients ?? []).filter((c) => c?.client_id !== clientId);
  return { ...as, clients: [...listed, client] as NonNullable<AsOptions>['clients'] };
}

/**
 * The operator console (issue 44) from the environment: CONSOLE_PATH (`console.path`),
 * CONSOLE_FIRST_ADMIN (`console.firstAdmin`, an existing username made admin at start-up) and
 * AUDIT_RETENTION_DAYS (`audit.retentionDays`), over the file's `console` / `audit`.
 */
function withConsoleEnv(as: AsOptions, env: NodeJS.ProcessEnv, problems: string[]): AsOptions {
  const path = env.CONSOLE_PATH?.trim();
  const firstAdmin = env.CONSOLE_FIRST_ADMIN?.trim();
  const retention = env.AUDIT_RETENTION_DAYS?.trim();
  let out = as;
  if (path || firstAdmin) {
    const consolePath = path ?? out?.console?.path;
    if (!consolePath) problems.push('CONSOLE_FIRST_ADMIN needs CONSOLE_PATH (the console is off without it)');
    else out = { ...out, console: { ...out?.console, path: consolePath, ...(firstAdmin ? { firstAdmin } : {}) } };
  }
  if (retention) {
    if (!/^\d{1,6}$/.test(retention) || Number(retention) < 1)
      problems.push('AUDIT_RETENTION_DAYS must be a positive whole number of days');
    else out = { ...out, audit: { ...out?.audit, retentionDays: Number(retention) } };
  }
  return out;
}

/** The authorization server's options: the file's keys, then TRUST_PROXY, DPoP, ID-JAG, third-party and metrics from the environment. */
function authorizationServerOptions(file: Record<string, unknown>, env: NodeJS.ProcessEnv, problems: string[]): AsOptions {
  const passthrough: Record<string, unknown> = {};
  for (const key of AS_FILE_KEYS) if (file[key] !== undefined) passthrough[key] = file[key];
  let as = Object.keys(passthrough).length ? (passthrough as AsOptions) : undefined;
  const trustProxyText = env.TRUST_PROXY?.trim();
  const trustProxy = trustProxyText ? trustProxyFromEnv(trustProxyText) : undefined;
  if (trustProxy !== undefined) as = { ...as, trustProxy };
  as = withMcpClientEnv(withThirdPartyEnv(withIdJagEnv(withDpopEnv(as, env, problems), env, problems), env, problems), env, problems);
  as = withConsoleEnv(as, env, problems);
  const metricsFlag = env.METRICS?.trim();
  const metricsToken = env.METRICS_TOKEN?.trim();
  if (metricsFlag || metricsToken) {
    as = {
      ...as,
      metrics: { ...as?.metrics, ...(metricsFlag ? { enabled: flag(metricsFlag) } : {}), ...(metricsToken ? { token: metricsToken } : {}) },
    };
  }
  return as;
}

/**
 * Environment + config file → the app's settings and every problem found (nothing thrown).
 * The assembled authorization-server configuration is validated too, so one start-up lists
 * every problem of both layers.
 */
export function loadConfig(env: NodeJS.ProcessEnv): { config: LoadedConfig; problems: string[] } {
  const problems: string[] = [];
  const { configFile, file, setting } = fileAndSetting(env, problems);
  const app = appSettings(setting, env, problems);
  const { databaseUrl, databaseSchema, storage } = storageSetting(setting, problems);
  const redisUrl = setting('redisUrl');
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL must be a redis:// or rediss:// URL');
  const authorizationServer = authorizationServerOptions(file, env, problems);

  const config: LoadedConfig = {
    port: app.port,
    host: setting('host'),
    issuer: app.issuer,
    resource: app.resource,
    dataDir: setting('dataDir') ?? DEFAULTS.storage.dataDir,
    databaseUrl: storage?.kind === 'postgres' ? databaseUrl : undefined,
    databaseSchema,
    storage,
    redisUrl,
    redisPrefix: setting('redisPrefix'),
    devAutoLogin: setting('devAutoLogin'),
    cimdAllowPrivateNetwork: flag(app.cimdFlag) ?? false,
    demoUser: flag(app.demoFlag),
    // `Production` or `PRODUCTION` is production too: a case slip must not drop every production check.
    production: env.NODE_ENV?.trim().toLowerCase() === 'production',
    logLevel: app.logLevel,
    shutdownTimeoutMs: app.shutdownTimeoutMs,
    authorizationServer,
    configFile,
  };
  problems.push(...serverConfigProblems(config));
  return { config, problems };
}

/** What `startAuthServer` would give `createAuthorizationServer`, checked before listening. */
function serverConfigProblems(config: LoadedConfig): string[] {
  const issuer = config.issuer ?? APP_DEFAULTS.issuer(config.port || APP_DEFAULTS.port);
  const probe: AuthorizationServerConfig = {
    serviceName: APP_DEFAULTS.serviceName,
    ...config.authorizationServer,
    issuer,
    resources: resourcesOf(config.authorizationServer, config.resource),
    storage: config.storage ?? { kind: 'sqlite', file: 'unused' },
    devAutoLogin: config.devAutoLogin ?? config.authorizationServer?.devAutoLogin,
    cimd: {
      ...config.authorizationServer?.cimd,
      allowPrivateNetwork: config.cimdAllowPrivateNetwork || !!config.authorizationServer?.cimd?.allowPrivateNetwork,
    },
    production: config.production,
    listenHosts: listenHostsOf(config.host),
  };
  const problems: string[] = [];
  try {
    validateConfig(probe);
  } catch (err) {
    if (err instanceof ConfigError) problems.push(...err.problems);
    else throw err;
  }
  // The authorization server's dev switches were judged by validateConfig (listenHosts above);
  // the app's own, the demo account, by the same rule.
  problems.push(
    ...devSwitchProblems(
      [DEMO_USER_SWITCH],
      { demoUser: config.demoUser },
      {
        production: config.production,
        issuer,
        listenHosts: probe.listenHosts,
        behindProxy: behindProxy(config.authorizationServer?.trustProxy),
      },
    ),
  );
  return problems;
}

/** Masks the password of a connection URL. */
function maskUrl(url: string | undefined): string | undefined {
  if (!url) return url;
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.href;
  } catch {
    return '[unparsable]';
  }
}

const SECRET_SETTING =
  /^(password|client_secret|clientSecret|secret|nonceSecret|encryptionKey|previousEncryptionKeys|initialAccessToken|token|privateKey|private_key|d|p|q|dp|dq|qi|k)$/;

function maskSecrets(value: unknown, key = ''): unknown {
  if (SECRET_SETTING.test(key) && value !== undefined && value !== null) return '***';
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, maskSecrets(v, k)]));
  }
  return value;
}

/** The effective configuration as shown by `--print-config`: secrets masked. */
export function printableConfig(config: LoadedConfig): Record<string, unknown> {
  const storage =
    config.storage?.kind === 'postgres'
      ? { kind: 'postgres', url: maskUrl(config.storage.url), schema: config.storage.schema ?? DEFAULTS.storage.postgresSchema }
      : (config.storage ?? { kind: 'sqlite', file: `${config.dataDir}/auth-server.sqlite` });
  return maskSecrets({
    configFile: config.configFile ?? null,
    production: config.production,
    port: config.port,
    host: config.host ?? `${APP_DEFAULTS.listenHosts.join(' and ')} (loopback)`,
    issuer: config.issuer ?? APP_DEFAULTS.issuer(config.port),
    resource: config.resource ?? APP_DEFAULTS.resource,
    storage,
    revocationSignal: config.redisUrl ? { redis: maskUrl(config.redisUrl), prefix: config.redisPrefix ?? APP_DEFAULTS.redisPrefix } : null,
    devAutoLogin: config.devAutoLogin ?? null,
    cimdAllowPrivateNetwork: config.cimdAllowPrivateNetwork,
    demoUser: demoUserSetting(config),
    logLevel: config.logLevel,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    authorizationServer: config.authorizationServer ?? {},
  }) as Record<string, unknown>;
}
