export { createAuthorizationServer, type AuthorizationServer } from './server.js';
export {
  validateConfig,
  ConfigError,
  issuerIsLoopback,
  type AuthorizationServerConfig,
  type ResourceConfig,
  type RegistrationConfig,
  type CimdConfig,
  type UserSeed,
  type RefreshTokenConfig,
} from './config.js';
export { consoleLogger, silentLogger, type Logger } from './logger.js';
export { hashPassword, verifyPassword } from './passwords.js';
export { isLoopbackHost } from './urls.js';
export { openStore, storageConfigFromEnv, defaultSqliteFile } from './storage/index.js';
export type { Store, StorageConfig, AccountRecord } from './storage/index.js';
export { StorageError } from './storage/index.js';
