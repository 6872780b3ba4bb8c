export type {
  AccountPatch,
  AccountRecord,
  AccountSource,
  AccountStore,
  AuditQuery,
  AuditRecord,
  AuditStore,
  CimdClientRecord,
  CimdClientStatus,
  CimdTrustPolicy,
  CimdTrustStore,
  ConnectionInput,
  ConnectionRecord,
  ConnectionStore,
  KeyStore,
  KeyValueEntry,
  KeyValueStore,
  NewAccount,
  NewAuditRecord,
  StorageConfig,
  Store,
  StoredSigningKey,
} from './types.js';
export { openStore } from './open.js';
export type { OpenStoreOptions } from './assemble.js';
export { DEFAULT_CLEANUP_INTERVAL_SECONDS } from './assemble.js';
export type { Clock } from './clock.js';
export { StorageError } from './errors.js';
export type { SqliteDriverName } from './sqlite/driver.js';
export { storageConfigFromEnv, defaultSqliteFile, DEFAULT_DATA_DIR, DEFAULT_PG_SCHEMA } from './config.js';
export { COOKIE_KEYS_KEPT, SIGNING_ALG } from './keys.js';
export { usernameKey, upstreamIdentityKey } from './accounts.js';
