/**
 * Every default of the runnable authorization server in one place: what `startAuthServer`, the
 * configuration reference (config.ts, `--print-config`) and the admin tool use when a setting is
 * left out. The authorization server's own defaults are the package's `DEFAULTS`; these are the
 * app's (runtime contract: AS_PORT, AS_HOST, AS_ISSUER, MCP_RESOURCE, LOG_LEVEL, SHUTDOWN_TIMEOUT_MS).
 */
import type { AuthorizationServerConfig, ResourceConfig } from '@mcp-auth-kit/authorization-server';
import { DEFAULT_REVOCATION_PREFIX } from '@mcp-auth-kit/protocol';

/** The demo MCP server of the runtime contract: the resource when none is configured. */
export const DEFAULT_RESOURCE = 'http://localhost:3000/mcp';

/** The demo resource's scopes, as the consent page words them. */
export const DEMO_SCOPES = {
  'notes:read': 'Read your notes',
  'notes:write': 'Create and change your notes',
};

export const APP_DEFAULTS = Object.freeze({
  port: 9000,
  /** Loopback only; `::1` is skipped where the host has no IPv6 loopback. */
  listenHosts: Object.freeze(['127.0.0.1', '::1']) as readonly [string, string],
  /** The issuer for the port actually bound (port 0 resolved). */
  issuer: (port: number): string => `http://localhost:${port}`,
  resource: DEFAULT_RESOURCE,
  logLevel: 'info' as const,
  // Below npm start's 10 s stop timeout, so a hung connection never turns a clean stop into a kill.
  shutdownTimeoutMs: 5000,
  serviceName: 'MCP Auth Kit',
  /** Key and channel prefix of the revocation signal in Redis, the same as the resource servers'. */
  redisPrefix: DEFAULT_REVOCATION_PREFIX,
  /** On close: how long queued revocations may take to reach Redis (the store keeps the rest). */
  revocationCloseTimeoutMs: 2_000,
  /**
   * On a local dev server every client shares one address: the DCR brake is loose there (not
   * where others can connect: they would get the loose brake too).
   */
  localRegistration: (): AuthorizationServerConfig['registration'] => ({ rateLimit: { max: 1000, windowSeconds: 3600 } }),
});

/**
 * The resources the server protects: the configured ones, else the demo resource at `resource`
 * (`name`: the demo MCP server's PRM resource_name, shown on the consent page).
 */
export function resourcesOf(
  authorizationServer: Partial<Pick<AuthorizationServerConfig, 'resources'>> | undefined,
  resource: string | undefined,
): ResourceConfig[] {
  return (
    authorizationServer?.resources ?? [
      { resource: resource ?? APP_DEFAULTS.resource, name: 'Demo notes', scopes: DEMO_SCOPES, defaultScopes: ['notes:read'] },
    ]
  );
}
