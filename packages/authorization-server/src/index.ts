// @mcp-auth-kit/authorization-server: what a program running the AS needs (README "API"). The
// checks a wrapping program runs itself are in ./ops/index.ts (@mcp-auth-kit/authorization-server/ops).
export { createAuthorizationServer, type AuthorizationServer } from './server.js';
export { DEFAULT_ACCESS_TOKEN_TTL, ID_TOKEN_TTL } from './provider/provider.js';
// The one class every mcp-auth-kit package throws for a bad configuration (defined in
// @mcp-auth-kit/protocol, the same class the resource server exports).
export {
  ConfigError,
  type AuthorizationServerConfig,
  type ResourceConfig,
  type RegistrationConfig,
  type CimdConfig,
  type UserSeed,
  type RefreshTokenConfig,
  type ResolvedConfig,
} from './config.js';
export { DEFAULT_DPOP_SIGNING_ALGS, type DpopConfig } from './tokens/dpop.js';
export { consoleLogger, silentLogger, type Logger } from './ops/logger.js';
export { pinoLogger, type PinoLoggerOptions } from './ops/pino-logger.js';
export { createAsMetrics, type AsMetrics, type MetricsConfig } from './ops/metrics.js';
export type { HealthState } from './ops/http.js';
export { hashPassword, verifyPassword } from './accounts/passwords.js';
export {
  listAccountGrants,
  revokeAccountGrants,
  revokeRememberedGrant,
  type AccountGrantSummary,
} from './interactions/remembered-grants.js';
export type { UpstreamProviderConfig } from './upstream/config.js';
export { openStore, storageConfigFromEnv, defaultSqliteFile } from './storage/index.js';
export type {
  Store,
  StorageConfig,
  AccountRecord,
  AccountSource,
  ConnectionInput,
  ConnectionRecord,
  ConnectionStore,
  SqliteDriverName,
} from './storage/index.js';
export { StorageError } from './storage/index.js';
export {
  createRevocationOutbox,
  REVOCATION_RECORD_NAMESPACE,
  type RevocationChannel,
  type RevocationOutbox,
  type RevocationOutboxOptions,
  type RevocationRecord,
} from './tokens/revocation-outbox.js';
// from the files that hold them, not the grant's index: the declarations stay free of oidc-provider's types
export { ID_JAG_GRANT_PROFILE, ID_JAG_TYP, JWT_BEARER_GRANT_TYPE } from './grants/jwt-bearer/constants.js';
// from the file that holds them, not the grant's index (as for the ID-JAG names above)
export { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT_TYPE } from './grants/token-exchange/constants.js';
export type { ThirdPartyConfig, ThirdPartyProviderConfig } from './config/types.js';
export {
  DEFAULT_ID_JAG_ALGORITHMS,
  type IdJagConfig,
  type TrustedIdpConfig,
  type IdJagAccountMatch,
} from './grants/jwt-bearer/config.js';
// the operator console's service (issue 44): one set of operations for the JSON admin API and the admin tool
export * from './admin/index.js';
export type {
  AuditQuery,
  AuditRecord,
  AuditStore,
  CimdClientRecord,
  CimdClientStatus,
  CimdTrustPolicy,
  CimdTrustStore,
  NewAuditRecord,
} from './storage/index.js';
