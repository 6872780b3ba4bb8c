import express, { type Express, type Request, type Response, type NextFunction } from 'express';
import type Provider from 'oidc-provider';
import helmet from 'helmet';
import { ConfigError } from '@mcp-auth-kit/protocol';
import type { AuthorizationServerConfig, ResolvedConfig } from './config/types.js';
import { CONFIG_SUBJECT, resolveConfig } from './config/resolve.js';
import type { OidcProvider } from './provider/oidc-shapes.js';
import { openStore } from './storage/index.js';
import type { StorageConfig, Store } from './storage/types.js';
import { audit } from './ops/audit.js';
import { type CimdTrust, createCimdTrust } from './clients/cimd-trust-gate.js';
import { cimdWaitingMiddleware } from './clients/cimd-waiting.js';
import { type ClientGate, installClientGate } from './clients/client-gate.js';
import { type AuditSink, createAuditSink } from './ops/audit-sink.js';
import { mountConsole } from './admin/mount.js';
import { createConsoleRouter } from './console/router.js';
import { consoleLogger } from './ops/logger.js';
import { buildProvider } from './provider/provider.js';
import { createInteractionRouter } from './interactions/router.js';
import { createAccountRouter } from './interactions/account.js';
import { createScopeText } from './interactions/scope-text.js';
import { ensureAccount, markProductionStore, seedUsers } from './accounts/accounts.js';
import { rateLimit } from './http/rate-limit.js';
import { trustProxySetting } from './http/client-address.js';
import { defaultScopeMiddleware } from './tokens/default-scope.js';
import { createAsMetrics, meteredLogger, type AsMetrics } from './ops/metrics.js';
import { healthRouter, metricsHandler, requestMiddleware, type HealthState } from './ops/http.js';
import { withRequestId } from './ops/request-context.js';
import { installRefreshGrace } from './tokens/refresh-grace.js';
import type { Logger } from './ops/logger.js';
import type { ResourceRegistry } from './tokens/resources.js';
import { createThirdParty, type ThirdParty } from './third-party/service.js';
import { createConnectRouter } from './third-party/connect-routes.js';

export interface AuthorizationServer {
  issuer: string;
  /** The whole AS as an express app (mount at the issuer's origin). */
  app: Express;
  /** The oidc-provider instance (a structural subset; see oidc-shapes.ts for the full type). */
  provider: OidcProvider;
  store: Store;
  /** This instance's Prometheus metrics (own registry); undefined when `metrics.enabled` is false. */
  metrics?: AsMetrics;
  /** Readiness state: set `draining` (or call `drain()`) when shutting down so `/readyz` answers 503. */
  health: HealthState;
  drain(): void;
  close(): Promise<void>;
}

/** oidc-provider validates configured clients lazily; fail at start-up instead, all at once. */
async function checkStaticClients(provider: Provider, config: ResolvedConfig): Promise<void> {
  const problems: string[] = [];
  for (const [i, client] of config.clients.entries()) {
    try {
      await provider.Client.find(client.client_id);
    } catch (err) {
      const e = err as { error_description?: string; message: string };
      problems.push(`clients[${i}] (${client.client_id}): ${e.error_description ?? e.message}`);
    }
  }
  if (problems.length) throw new ConfigError(problems, CONFIG_SUBJECT);
}

function isStore(value: unknown): value is Store {
  return !!value && typeof (value as Store).adapter === 'function' && typeof (value as Store).close === 'function';
}

/** Seeds the configured users and the dev account, and warns about what is open. */
async function prepareAccounts(config: ResolvedConfig, store: Store, logger: Logger, metrics: AsMetrics | undefined) {
  // Before seeding: a development instance on the same store then refuses the demo account.
  if (config.production) await markProductionStore(store, config.issuer);
  if (config.users.length) await seedUsers(store, config.users);
  const devAccount = config.devAutoLogin ? await ensureAccount(store, config.devAutoLogin) : undefined;
  if (devAccount)
    logger.warn('DEV_AUTO_LOGIN is on: every authorization request is approved without a page', { username: devAccount.username });
  if (config.cimd.allowPrivateNetwork) logger.warn('CIMD may fetch loopback/private addresses (dev only)');
  if (config.production && metrics && !config.metrics.token) {
    logger.warn('GET /metrics is open to anyone who reaches this server: block it at the proxy or set metrics.token (METRICS_TOKEN)');
  }
  return devAccount;
}

interface AppParts {
  config: ResolvedConfig;
  provider: Provider;
  resources: ResourceRegistry;
  mountPath: string;
  store: Store;
  logger: Logger;
  metrics: AsMetrics | undefined;
  health: HealthState;
  devAccountId: string | undefined;
  thirdParty: ThirdParty | undefined;
  cimdTrust: CimdTrust;
  clientGate: ClientGate;
  /** The process log without the audit store (admin/mount.ts). */
  logOnly: Logger;
}

/** Baseline headers, health, metrics and the path-inserted discovery URLs. */
function mountInfrastructure(app: Express, p: AppParts, callback: ReturnType<Provider['callback']>): void {
  const { config, mountPath, logger, metrics } = p;
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxySetting(config.trustProxy));
  app.use(requestMiddleware({ logger, metrics, mountPath }));
  // Baseline headers on every response (API and oidc-provider's own pages). CSP is set per
  // page (interactions, error page) since oidc-provider's form_post page needs its own;
  // CORP stays off so browser-based MCP clients can read metadata, JWKS and tokens (CORS).
  app.use(
    helmet({
      contentSecurityPolicy: false,
      crossOriginResourcePolicy: false,
      strictTransportSecurity: new URL(config.issuer).protocol === 'https:' ? { maxAge: 31536000 } : false,
      referrerPolicy: { policy: 'no-referrer' },
    }),
  );
  // Liveness (/healthz) and readiness (/readyz: store ping, 503 while draining).
  app.use(healthRouter(p.store, p.health, logger, config.readinessTimeoutMs));
  if (metrics) app.get('/metrics', metricsHandler(metrics, config.metrics.token));
  // RFC 8414 §3.1: an issuer with a path is discovered at the path-inserted well-known URL
  // (oidc-provider serves an issuer with a path only under <mount>/.well-known). The OIDC path-insertion form is served the same way for MCP clients.
  if (mountPath) {
    for (const wellKnown of ['oauth-authorization-server', 'openid-configuration']) {
      const rewrite = (req: Request, res: Response) => {
        req.originalUrl = `${mountPath}/.well-known/${wellKnown}`;
        req.url = `/.well-known/${wellKnown}`;
        callback(req, res);
      };
      app.get(`/.well-known/${wellKnown}${mountPath}`, rewrite);
      app.options(`/.well-known/${wellKnown}${mountPath}`, rewrite);
    }
  }
}

/** The authorization request's default scope, the DCR rate limit, the pages, then oidc-provider. */
function mountAuthorization(app: Express, p: AppParts, callback: ReturnType<Provider['callback']>): void {
  const { config, mountPath, logger, metrics, store, resources } = p;
  // A CIMD client waiting for the operator's approval gets a page saying so (cimd-waiting.ts).
  app.get(
    `${mountPath}/auth`,
    cimdWaitingMiddleware({
      trust: p.cimdTrust,
      gate: p.clientGate,
      serviceName: config.serviceName,
      stylesheet: `${mountPath}/interaction/assets/style.css`,
      logger,
    }),
  );
  app.get(`${mountPath}/auth`, defaultScopeMiddleware(resources));
  const { registration } = config;
  if (registration.enabled && registration.rateLimit !== false) {
    app.post(
      `${mountPath}/reg`,
      rateLimit(store.kv, 'dcr-rate', registration.rateLimit, logger, () => metrics?.registrationRateLimited()),
    );
  }
  const issuerUrl = new URL(config.issuer);
  // What every page of the AS shares: the interaction pages and /account.
  const pages = {
    provider: p.provider,
    store,
    resources,
    scopeText: createScopeText(resources, config.scopeDescriptions),
    logger,
    mountPath,
    secureCookies: issuerUrl.protocol === 'https:',
    serviceName: config.serviceName,
    production: config.production,
    thirdParty: p.thirdParty,
  };
  app.use(
    `${mountPath}/interaction`,
    createInteractionRouter({
      ...pages,
      staticClientIds: new Set(config.clients.map((c) => c.client_id)),
      devAutoLoginAccountId: p.devAccountId,
      consolePath: config.console?.path,
      production: config.production,
      issuer: config.issuer,
      upstream: config.upstream,
      loginLimits: config.loginThrottle,
    }),
  );
  // The operator console's sign-in and JSON admin API, when configured (admin/mount.ts).
  const consoleMount = mountConsole(app, config, { provider: p.provider, store, mountPath, logger: p.logOnly });
  // The console's pages beside its API, on the same service (console/router.ts).
  if (consoleMount && config.console) {
    app.use(
      consoleMount.base,
      createConsoleRouter({
        ...pages,
        issuer: config.issuer,
        consolePath: consoleMount.base,
        admin: consoleMount.service,
        freshSignInSeconds: config.console.maxAgeSeconds,
        resources: config.resources.map((r) => r.resource),
      }),
    );
  }
  // The signed-in user's approvals, each revocable, and connections (see interactions/account.ts).
  app.use(`${mountPath}/account`, createAccountRouter(pages));
  // Third-party authorization: where users connect a provider account (third-party/connect-routes.ts).
  if (p.thirdParty) app.use(`${mountPath}/connect`, createConnectRouter({ ...pages, thirdParty: p.thirdParty, issuer: config.issuer }));
  if (mountPath) app.use(mountPath, callback);
  else app.use(callback);
  app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
    logger.error('unhandled error', { error: err.name, detail: err.message });
    if (!res.headersSent) res.status(500).json({ error: 'server_error' });
  });
}

/**
 * The console's first admin (`console.firstAdmin`, env CONSOLE_FIRST_ADMIN in the app): an
 * existing account made by the operator gets the admin role at start-up; a missing one, or one that
 * came from self sign-up, is a warning, never created or promoted.
 */
async function grantFirstAdmin(config: ResolvedConfig, store: Store, logger: Logger): Promise<void> {
  const username = config.console?.firstAdmin;
  if (!username) return;
  const account = await store.accounts.findByUsername(username);
  if (!account) {
    logger.warn('console.firstAdmin names no account: create it with the admin tool (user add), then restart', { username });
    return;
  }
  if (account.admin) return;
  // A name anyone could have taken first (upstream sign-up, ID-JAG just in time) never becomes an
  // admin by configuration: only an account the operator made or adopted.
  if (account.source !== 'operator') {
    logger.warn('console.firstAdmin names an account the operator did not create: not made an admin (adopt it with the admin tool first)', {
      username,
      source: account.source,
    });
    return;
  }
  await store.accounts.update(account.id, { admin: true });
  audit(logger, 'account.updated', { account_id: account.id, admin: true, actor: 'config', via: 'first-admin' });
}

/** Builds the provider and the express app on an open store. */
async function assemble(config: ResolvedConfig, store: Store, sink: AuditSink, metrics: AsMetrics | undefined, health: HealthState) {
  const { logger } = sink;
  const devAccount = await prepareAccounts(config, store, logger, metrics);
  await grantFirstAdmin(config, store, logger);
  const thirdParty = await createThirdParty(config, store, logger);
  const { provider, resources, mountPath } = await buildProvider(config, store, logger, metrics, thirdParty);
  await checkStaticClients(provider, config);
  // Disabled clients and the stored CIMD trust policy, wherever oidc-provider finds a client.
  const cimdTrust = createCimdTrust(store);
  const clientGate = installClientGate(provider, store, cimdTrust, logger);
  // Concurrent refreshes of one token by the same client get one answer, not reuse detection.
  if (config.refreshTokens.enabled) {
    await installRefreshGrace(provider, { kv: store.kv, graceSeconds: config.refreshTokens.reuseGraceSeconds, logger });
  }
  const parts: AppParts = {
    config,
    provider,
    resources,
    mountPath,
    store,
    logger,
    metrics,
    health,
    devAccountId: devAccount?.id,
    thirdParty,
    cimdTrust,
    clientGate,
    logOnly: sink.logOnly,
  };
  const app = express();
  const callback = provider.callback();
  mountInfrastructure(app, parts, callback);
  mountAuthorization(app, parts, callback);
  return { app, provider };
}

export async function createAuthorizationServer(options: AuthorizationServerConfig): Promise<AuthorizationServer> {
  const config = resolveConfig(options);
  const metrics = config.metrics.enabled ? createAsMetrics(config.metrics) : undefined;
  const baseLogger = config.logger ?? consoleLogger();
  // Every line gets the request id; audit events on their way through feed the metrics.
  const logger = withRequestId(metrics ? meteredLogger(baseLogger, metrics) : baseLogger);
  const health: HealthState = { draining: false };
  const ownsStore = !isStore(config.storage);
  const store = isStore(config.storage) ? config.storage : await openStore(config.storage as StorageConfig);

  // Every audit event also lands in the store's audit log (the console's audit view), with retention.
  const sink = createAuditSink(logger, store.audit, config.audit.retentionDays);

  try {
    const { app, provider } = await assemble(config, store, sink, metrics, health);
    let closed = false;
    return {
      issuer: config.issuer,
      app,
      provider,
      store,
      metrics,
      health,
      drain() {
        health.draining = true;
      },
      async close() {
        if (closed) return;
        closed = true;
        health.draining = true;
        metrics?.registry.clear();
        sink.stop();
        await sink.settled();
        if (ownsStore) await store.close();
      },
    };
  } catch (err) {
    sink.stop();
    if (ownsStore) await store.close().catch(() => {});
    throw err;
  }
}
