/**
 * Production mode (`production: true`, the app sets it from NODE_ENV=production): refuses
 * what is fine on a laptop and dangerous on a server. Each problem says how to fix it.
 */
import type { AuthorizationServerConfig } from '../config/types.js';
import { parseUrl } from '../http/urls.js';
import { DEV_SWITCHES, devSwitchProblems, exposedListenHost } from './dev-switches.js';

export function productionProblems(config: Partial<AuthorizationServerConfig>): string[] {
  const problems = devSwitchProblems(DEV_SWITCHES, config, { production: true });
  const storage = config.storage as { kind?: string } | undefined;
  if (storage?.kind === 'memory') {
    problems.push(
      'storage: the memory store loses clients, grants, refresh tokens and the signing keys on restart; set DATABASE_URL=postgres://… (or leave it unset for SQLite under DATA_DIR)',
    );
  }
  // A non-loopback http issuer is refused in every mode by validateConfig (with how to fix it).
  // A loopback http issuer is the compose demo's, behind a balancer on the same machine; served
  // from an address others can reach, it is plain http to them: tokens and passwords in clear.
  const issuer = typeof config.issuer === 'string' ? parseUrl(config.issuer) : undefined;
  const exposed = exposedListenHost(Array.isArray(config.listenHosts) ? config.listenHosts : undefined);
  if (issuer?.protocol === 'http:' && exposed !== undefined) {
    // Never echo user information (validateConfig refuses it separately).
    const shown = `${issuer.protocol}//${issuer.host}${issuer.pathname === '/' ? '' : issuer.pathname}`;
    problems.push(
      `issuer: the http issuer ${shown} is refused in production while the server listens on ${exposed}, which is reachable from outside; ` +
        'set AS_ISSUER to the public https URL (TLS at a proxy, TRUST_PROXY=1) or listen on loopback only (AS_HOST unset or 127.0.0.1)',
    );
  }
  return problems;
}
