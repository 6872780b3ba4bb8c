/**
 * Turns one backend's parts into a `Store`: the shared adapter and key logic, the
 * "closed" guard, and the periodic clean-up timer.
 */
import type { Adapter } from 'oidc-provider';
import { ModelAdapter } from './adapter.js';
import type { RequestContext } from './request-context.js';
import type { Clock } from './clock.js';
import { closedError } from './errors.js';
import { createKeyStore, type KeyBackend } from './keys.js';
import { validatingKv } from './kv-input.js';
import { nulSafeAccounts, nulSafeAudit, nulSafeCimdTrust, nulSafeConnections, nulSafeKv, nulSafeModels } from './no-nul.js';
import type { ModelBackend } from './model-rows.js';
import type { AccountStore, AuditStore, CimdTrustStore, ConnectionStore, KeyValueStore, StorageConfig, Store } from './types.js';

export interface OpenStoreOptions {
  /** Epoch-millisecond clock (tests move time with it). Default `Date.now`. */
  clock?: Clock;
  /** Seconds between automatic `cleanup()` runs while open; 0 disables. Default 600. */
  cleanupIntervalSeconds?: number;
  /** Called after each automatic clean-up with the number of rows it deleted (for logs/metrics). */
  onCleanup?: (removed: number) => void;
  /**
   * Called with background failures: a failed automatic clean-up (the next run retries) or
   * an idle PostgreSQL connection dropped by the server (the pool reconnects). Default: ignored.
   */
  onError?: (error: unknown) => void;
  /**
   * Called after a grant was deleted, whichever way it ended (RFC 7009 revocation, refresh-token
   * reuse, code replay, the account page, the admin tool), so resource servers can be told
   * (`createRedisRevocationSignal(…).revoked`: a record in this store's kv, then Redis in the
   * background). Awaited, so keep it to a store write; a failure goes to `onError` and never
   * fails the revocation itself (the grant is gone from the store either way).
   */
  onGrantRevoked?: (grantId: string) => void | Promise<void>;
  /**
   * The request being served. Default: oidc-provider's `Provider.ctx` (which is what the AS
   * needs); tests of a refresh token's rotation outside a provider give their own.
   */
  currentRequest?: () => RequestContext | undefined;
}

export const DEFAULT_CLEANUP_INTERVAL_SECONDS = 600;

export interface BackendParts {
  kind: StorageConfig['kind'];
  models: ModelBackend;
  keys: KeyBackend;
  accounts: AccountStore;
  connections: ConnectionStore;
  kv: KeyValueStore;
  audit: AuditStore;
  cimdTrust: CimdTrustStore;
  ping(): Promise<void>;
  cleanup(now: number): Promise<number>;
  close(): Promise<void>;
}

/** Makes every method of `target` reject once the store is closed. */
function guard<T extends object>(target: T, isClosed: () => boolean): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (isClosed()) return Promise.reject(closedError());
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
}

export function assembleStore(parts: BackendParts, clock: Clock, options: OpenStoreOptions = {}): Store {
  let closed = false;
  const isClosed = () => closed;
  const models = guard(nulSafeModels(parts.models), isClosed);
  const adapters = new Map<string, Adapter>();
  const { onGrantRevoked } = options;
  const grantEnded =
    onGrantRevoked === undefined
      ? undefined
      : async (grantId: string) => {
          try {
            await onGrantRevoked(grantId);
          } catch (error) {
            options.onError?.(error);
          }
        };

  const cleanup = async (): Promise<number> => {
    if (closed) throw closedError();
    return parts.cleanup(clock());
  };

  const intervalSeconds = options.cleanupIntervalSeconds ?? DEFAULT_CLEANUP_INTERVAL_SECONDS;
  let running: Promise<unknown> | undefined;
  const timer =
    intervalSeconds > 0
      ? setInterval(() => {
          if (closed || running) return;
          running = cleanup()
            .then((removed) => options.onCleanup?.(removed))
            .catch((error: unknown) => options.onError?.(error))
            .finally(() => {
              running = undefined;
            });
        }, intervalSeconds * 1000)
      : undefined;
  // The timer must never keep a process alive on its own.
  timer?.unref();

  return {
    kind: parts.kind,
    adapter(name: string): Adapter {
      let adapter = adapters.get(name);
      if (!adapter) {
        adapter = new ModelAdapter(name, models, clock, grantEnded, options.currentRequest);
        adapters.set(name, adapter);
      }
      return adapter;
    },
    accounts: guard(nulSafeAccounts(parts.accounts), isClosed),
    keys: guard(createKeyStore(parts.keys, clock), isClosed),
    kv: guard(nulSafeKv(validatingKv(parts.kv)), isClosed),
    connections: guard(nulSafeConnections(parts.connections), isClosed),
    audit: guard(nulSafeAudit(parts.audit), isClosed),
    cimdTrust: guard(nulSafeCimdTrust(parts.cimdTrust), isClosed),
    listModels: (model: string) => models.list(model, clock()),
    ping: () => (closed ? Promise.reject(closedError()) : parts.ping()),
    cleanup,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await running;
      await parts.close();
    },
  };
}
