/**
 * Versioned schema migrations. Each backend applies, at start-up and under its own lock, the
 * steps whose version is not yet recorded in `schema_migrations`; a step never changes once
 * released (add a new one instead). A database newer than this build is refused rather than
 * half-understood.
 */
import { StorageError } from './errors.js';

export interface Migration {
  version: number;
  name: string;
  /** One or more statements (executed as a script). */
  sql: string;
}

export function pendingMigrations(all: readonly Migration[], applied: readonly number[]): Migration[] {
  const latest = Math.max(0, ...all.map((m) => m.version));
  const newest = Math.max(0, ...applied);
  if (newest > latest) {
    throw new StorageError(
      `database schema version ${newest} is newer than this build supports (${latest}); upgrade the server`,
      'misconfigured',
    );
  }
  const done = new Set(applied);
  return all.filter((m) => !done.has(m.version)).sort((a, b) => a.version - b.version);
}

/** SQLite: `expires_at`/timestamps in epoch ms (models, kv) or seconds (keys, accounts). */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
CREATE TABLE oidc_models (
  model TEXT NOT NULL,
  id TEXT NOT NULL,
  payload TEXT NOT NULL,
  grant_id TEXT,
  uid TEXT,
  user_code TEXT,
  expires_at INTEGER,
  PRIMARY KEY (model, id)
);
CREATE INDEX oidc_models_grant_id ON oidc_models (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oidc_models_uid ON oidc_models (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX oidc_models_user_code ON oidc_models (model, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oidc_models_expires_at ON oidc_models (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  username TEXT NOT NULL,
  username_key TEXT NOT NULL UNIQUE,
  password_hash TEXT,
  display_name TEXT,
  disabled INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE account_identities (
  identity TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  position INTEGER NOT NULL
);
CREATE INDEX account_identities_account_id ON account_identities (account_id);

CREATE TABLE signing_keys (
  kid TEXT PRIMARY KEY,
  jwk TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('next', 'current', 'retired')),
  created_at INTEGER NOT NULL,
  retire_after INTEGER
);
CREATE TABLE cookie_keys (
  position INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE kv (
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (namespace, key)
);
CREATE INDEX kv_expires_at ON kv (expires_at);
`,
  },
  {
    version: 2,
    name: 'account source',
    // Rows made before the field: one with an upstream identity may come from a self sign-up
    // (upstream or ID-JAG), so it is never adoptable by e-mail; one without was made by the operator.
    sql: `
ALTER TABLE accounts ADD COLUMN source TEXT NOT NULL DEFAULT 'operator';
UPDATE accounts SET source = 'unknown' WHERE id IN (SELECT account_id FROM account_identities);
`,
  },
  {
    version: 3,
    name: 'third-party connections',
    // The token vault: one sealed token set per (account, provider); times in epoch seconds.
    sql: `
CREATE TABLE third_party_connections (
  account_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  key_id TEXT NOT NULL,
  sealed TEXT NOT NULL,
  scopes TEXT NOT NULL,
  provider_subject TEXT,
  expires_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (account_id, provider)
);
`,
  },
  {
    version: 4,
    name: 'operator console',
    // Issue 44: the console's admin role, the audit log (times in epoch ms, ids in insertion
    // order), the CIMD trust policy (one row) and the CIMD approval queue (times in epoch seconds).
    sql: `
ALTER TABLE accounts ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  event TEXT NOT NULL,
  actor TEXT,
  account_id TEXT,
  client_id TEXT,
  fields TEXT NOT NULL
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_account_id ON audit_log (account_id, id) WHERE account_id IS NOT NULL;
CREATE INDEX audit_log_client_id ON audit_log (client_id, id) WHERE client_id IS NOT NULL;
CREATE INDEX audit_log_event ON audit_log (event, id);
CREATE TABLE cimd_trust_policy (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  allowed_hosts TEXT NOT NULL,
  denied_hosts TEXT NOT NULL,
  approval_required INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  updated_by TEXT
);
CREATE TABLE cimd_clients (
  client_id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL,
  decided_at INTEGER,
  decided_by TEXT
);
CREATE INDEX cimd_clients_status ON cimd_clients (status, first_seen);
`,
  },
];

/** PostgreSQL: `{schema}` is replaced by the quoted schema name. */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
CREATE TABLE {schema}.oidc_models (
  model TEXT NOT NULL,
  id TEXT NOT NULL,
  payload TEXT NOT NULL,
  grant_id TEXT,
  uid TEXT,
  user_code TEXT,
  expires_at BIGINT,
  PRIMARY KEY (model, id)
);
CREATE INDEX oidc_models_grant_id ON {schema}.oidc_models (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oidc_models_uid ON {schema}.oidc_models (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX oidc_models_user_code ON {schema}.oidc_models (model, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oidc_models_expires_at ON {schema}.oidc_models (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE {schema}.accounts (
  id TEXT PRIMARY KEY,
  username TEXT NOT NULL,
  username_key TEXT NOT NULL UNIQUE,
  password_hash TEXT,
  display_name TEXT,
  disabled BOOLEAN NOT NULL DEFAULT FALSE,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE TABLE {schema}.account_identities (
  identity TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES {schema}.accounts (id) ON DELETE CASCADE,
  position INTEGER NOT NULL
);
CREATE INDEX account_identities_account_id ON {schema}.account_identities (account_id);

CREATE TABLE {schema}.signing_keys (
  kid TEXT PRIMARY KEY,
  jwk TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('next', 'current', 'retired')),
  created_at BIGINT NOT NULL,
  retire_after BIGINT
);
CREATE TABLE {schema}.cookie_keys (
  position INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE {schema}.kv (
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (namespace, key)
);
CREATE INDEX kv_expires_at ON {schema}.kv (expires_at);
`,
  },
  {
    version: 2,
    name: 'account source',
    // See the SQLite step 2: unknown origin with an upstream identity, operator without.
    sql: `
ALTER TABLE {schema}.accounts ADD COLUMN source TEXT NOT NULL DEFAULT 'operator';
UPDATE {schema}.accounts SET source = 'unknown' WHERE id IN (SELECT account_id FROM {schema}.account_identities);
`,
  },
  {
    version: 3,
    name: 'third-party connections',
    // See the SQLite step 3.
    sql: `
CREATE TABLE {schema}.third_party_connections (
  account_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  key_id TEXT NOT NULL,
  sealed TEXT NOT NULL,
  scopes TEXT NOT NULL,
  provider_subject TEXT,
  expires_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (account_id, provider)
);
`,
  },
  {
    version: 4,
    name: 'operator console',
    // See the SQLite step 4.
    sql: `
ALTER TABLE {schema}.accounts ADD COLUMN admin BOOLEAN NOT NULL DEFAULT FALSE;
CREATE TABLE {schema}.audit_log (
  id BIGSERIAL PRIMARY KEY,
  at BIGINT NOT NULL,
  event TEXT NOT NULL,
  actor TEXT,
  account_id TEXT,
  client_id TEXT,
  fields TEXT NOT NULL
);
CREATE INDEX audit_log_at ON {schema}.audit_log (at);
CREATE INDEX audit_log_account_id ON {schema}.audit_log (account_id, id) WHERE account_id IS NOT NULL;
CREATE INDEX audit_log_client_id ON {schema}.audit_log (client_id, id) WHERE client_id IS NOT NULL;
CREATE INDEX audit_log_event ON {schema}.audit_log (event, id);
CREATE TABLE {schema}.cimd_trust_policy (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  allowed_hosts TEXT NOT NULL,
  denied_hosts TEXT NOT NULL,
  approval_required BOOLEAN NOT NULL,
  updated_at BIGINT NOT NULL,
  updated_by TEXT
);
CREATE TABLE {schema}.cimd_clients (
  client_id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
  first_seen BIGINT NOT NULL,
  last_seen BIGINT NOT NULL,
  decided_at BIGINT,
  decided_by TEXT
);
CREATE INDEX cimd_clients_status ON {schema}.cimd_clients (status, first_seen);
`,
  },
];
