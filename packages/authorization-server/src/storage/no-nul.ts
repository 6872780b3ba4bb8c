/**
 * No value containing U+0000 reaches a backend (review 40, finding 7). PostgreSQL `text` cannot
 * hold NUL: a lookup by a request value with a NUL (a login name, a `client_id`, a code, a
 * refresh token, a token to revoke) failed with a driver error, i.e. a 500, where the memory
 * and SQLite stores answered "not found". Every key this server writes is generated or checked
 * (ids, grant ids, usernames), so none holds a NUL and such a lookup truthfully finds nothing;
 * deciding it here, once, holds for every entry point (query, form, JSON, path, cookie) and
 * every store alike, including oidc-provider's own lookups, which no HTTP middleware sees
 * before they happen.
 */
import { StorageError } from './errors.js';
import type { ModelBackend } from './model-rows.js';
import type { AccountStore, AuditStore, CimdTrustStore, ConnectionStore, KeyValueStore } from './types.js';

const NUL = '\u0000';

function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(NUL);
  // A NextRow / Stamp / ModelRow names its row by `id` (and maybe `grantId`, `uid`, `userCode`); a connection by `accountId` and `provider`.
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const row = value as Record<string, unknown>;
    return ['id', 'grantId', 'uid', 'userCode', 'username', 'accountId', 'provider', 'clientId', 'actor', 'event'].some(
      (k) => typeof row[k] === 'string' && (row[k] as string).includes(NUL),
    );
  }
  return false;
}

function refused(what: string): StorageError {
  return new StorageError(`${what} must not contain U+0000`, 'invalid_input');
}

/**
 * Wraps every method of `target`: a call with a NUL in one of its arguments answers `absent(name)`
 * when that is a lookup's "nothing" (`undefined` / `false`), else it is refused (a write of a
 * NUL-bearing key never comes from a request: those keys are generated).
 */
function guardNul<T extends object>(
  target: T,
  what: string,
  absent: (method: string, args: unknown[]) => { value: unknown } | undefined,
): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!args.some(hasNul)) return (value as (...a: unknown[]) => unknown).apply(obj, args);
        const answer = absent(String(prop), args);
        if (answer) return Promise.resolve(answer.value);
        return Promise.reject(refused(`${what}.${String(prop)}`));
      };
    },
  });
}

/** Model rows: lookups find nothing, consuming or deleting nothing is a no-op. */
export function nulSafeModels(models: ModelBackend): ModelBackend {
  const guarded = guardNul(models, 'model', (method) => {
    if (method.startsWith('find')) return { value: undefined };
    if (method === 'consume') return { value: false };
    if (method === 'destroy' || method === 'revokeByGrantId') return { value: undefined };
    return undefined;
  });
  // `find`'s read-ahead row (`next`) is only a hint: a NUL there drops the hint, not the lookup.
  const find: ModelBackend['find'] = (model, id, now, next) => guarded.find(model, id, now, next && hasNul(next) ? undefined : next);
  return new Proxy(guarded, { get: (obj, prop, receiver) => (prop === 'find' ? find : Reflect.get(obj, prop, receiver)) });
}

/** Accounts: lookups find nothing; creating or renaming with a NUL is refused (`invalid_input`). */
export function nulSafeAccounts(accounts: AccountStore): AccountStore {
  return guardNul(accounts, 'account', (method) => (method.startsWith('find') ? { value: undefined } : undefined));
}

/** Connections: a lookup or delete with a NUL finds nothing; a write with one is refused (`invalid_input`). */
export function nulSafeConnections(connections: ConnectionStore): ConnectionStore {
  return guardNul(connections, 'connection', (method) => {
    if (method === 'get') return { value: undefined };
    if (method === 'list') return { value: [] };
    if (method === 'delete') return { value: false };
    if (method === 'deleteAccount') return { value: 0 };
    return undefined;
  });
}

/** Audit log: a search with a NUL finds nothing; a record with one is refused (the audit sink makes names visible first). */
export function nulSafeAudit(audit: AuditStore): AuditStore {
  return guardNul(audit, 'audit', (method) => (method === 'search' ? { value: [] } : undefined));
}

/** CIMD trust: a lookup or delete with a NUL finds nothing; a write with one is refused. */
export function nulSafeCimdTrust(trust: CimdTrustStore): CimdTrustStore {
  return guardNul(trust, 'cimd client', (method) => {
    if (method === 'get') return { value: undefined };
    if (method === 'delete') return { value: false };
    return undefined;
  });
}

/**
 * kv keys carry request values too (a login name in the throttle's key): a NUL becomes U+FFFD in
 * every operation, so a count or a record under such a key works like any other. Two keys that
 * differ only there share one entry, which for the counters means the brake counts both.
 */
export function nulSafeKv(kv: KeyValueStore): KeyValueStore {
  const safe = (key: unknown) => (typeof key === 'string' && key.includes(NUL) ? key.replaceAll(NUL, '\uFFFD') : key);
  return new Proxy(kv, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function') return value;
      return (namespace: unknown, key: unknown, ...rest: unknown[]) =>
        (value as (...a: unknown[]) => unknown).call(obj, namespace, safe(key), ...rest);
    },
  });
}
