/**
 * The operator console's routes on the AS app (issue 44), only when `console.path` is configured:
 * its sign-in through the login page, and the JSON admin API at `<path>/api`. The console's
 * pages (console-ui) mount beside them on the same base path and share the service.
 */
import type { Express } from 'express';
import type Provider from 'oidc-provider';
import { ID_TOKEN_TTL } from '../config/defaults.js';
import type { ResolvedConfig } from '../config/types.js';
import type { Logger } from '../ops/logger.js';
import type { Store } from '../storage/types.js';
import { createAdminApiRouter } from './api.js';
import { type AdminService, createAdminService } from './service.js';
import { consoleSignInUrl } from './sign-in.js';

export interface ConsoleMount {
  /** `<mount path><console.path>`: where the console's pages and API live. */
  base: string;
  service: AdminService;
}

/** The longest lifetime of a token the AS signs: a retired signing key stays published that long. */
export function longestTokenLifetime(config: ResolvedConfig): number {
  return Math.max(
    config.accessTokenTTL,
    ID_TOKEN_TTL,
    ...config.resources.flatMap((r) => (r.accessTokenTTL === undefined ? [] : [r.accessTokenTTL])),
  );
}

/**
 * `logger` writes the process log only: the service stores its own audit records (awaited), so it
 * must not be given the logger that also stores every audit line (audit-sink.ts).
 */
export function mountConsole(
  app: Express,
  config: ResolvedConfig,
  p: { provider: Provider; store: Store; mountPath: string; logger: Logger },
): ConsoleMount | undefined {
  if (!config.console) return undefined;
  const { path, maxAgeSeconds } = config.console;
  const base = `${p.mountPath}${path}`;
  const service = createAdminService({
    store: p.store,
    configuredClients: config.clients,
    logger: p.logger,
    longestTokenLifetime: longestTokenLifetime(config),
    production: config.production,
  });
  const signInUrl = () => consoleSignInUrl(config.issuer, path);
  app.get(`${base}/sign-in`, (_req, res) => res.redirect(303, signInUrl()));
  // Where the console's sign-in ends (the interaction router drops the request once signed in).
  app.get(`${base}/signed-in`, (_req, res) => res.redirect(303, `${base}/`));
  app.use(
    `${base}/api`,
    createAdminApiRouter({
      service,
      logger: p.logger,
      provider: p.provider,
      store: p.store,
      production: config.production,
      issuerOrigin: new URL(config.issuer).origin,
      maxAgeSeconds,
      signInUrl,
    }),
  );
  return { base, service };
}
