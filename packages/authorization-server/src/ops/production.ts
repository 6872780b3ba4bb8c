/**
 * Production mode (`production: true`, the app sets it from NODE_ENV=production): refuses
 * what is fine on a laptop and dangerous on a server. Each problem says how to fix it.
 */
import type { AuthorizationServerConfig } from '../config.js';

export function productionProblems(config: Partial<AuthorizationServerConfig>): string[] {
  const problems: string[] = [];
  if (config.devAutoLogin) {
    problems.push('devAutoLogin (DEV_AUTO_LOGIN): dev-only switch refused in production; unset it (users log in through the login page)');
  }
  if (config.cimd?.allowPrivateNetwork) {
    problems.push(
      'cimd.allowPrivateNetwork (CIMD_ALLOW_PRIVATE_NETWORK): dev-only switch refused in production; unset it (CIMD documents must be on public https hosts)',
    );
  }
  const storage = config.storage as { kind?: string } | undefined;
  if (storage?.kind === 'memory') {
    problems.push(
      'storage: the memory store loses clients, grants, refresh tokens and the signing keys on restart; set DATABASE_URL=postgres://… (or leave it unset for SQLite under DATA_DIR)',
    );
  }
  // A non-loopback http issuer is refused in every mode by validateConfig (with how to fix it).
  return problems;
}
