/**
 * The public face of the authorization server's configuration. The types live in
 * config/types.ts, the defaults in config/defaults.ts, the shape in config/schema.ts and the
 * one check-and-resolve step in config/resolve.ts.
 */
import type { AuthorizationServerConfig } from './config/types.js';
import { resolveConfig } from './config/resolve.js';

export type {
  AuthorizationServerConfig,
  ResourceConfig,
  RegistrationConfig,
  CimdConfig,
  UserSeed,
  RefreshTokenConfig,
  ResolvedConfig,
} from './config/types.js';
export { CONFIG_SUBJECT, configProblems, resolveConfig } from './config/resolve.js';
export { DEFAULTS } from './config/defaults.js';

// One class for every package's configuration errors (re-exported, so `instanceof` holds across packages).
export { ConfigError } from '@mcp-auth-kit/protocol';

/** Checks the whole configuration, storage included, and throws one ConfigError listing every problem. */
export function validateConfig(config: AuthorizationServerConfig): void {
  resolveConfig(config);
}
