/**
 * The admin service (issue 44): one set of operations over the store, used by the JSON admin
 * API (under the console path) and the admin tool (`apps/auth-server/src/admin.ts`, which opens
 * the store directly, without a running server), so that the two never disagree. Every change
 * writes an audit event with the operator's `sub`; no answer carries a secret.
 */
import { cimdOperations } from './cimd.js';
import { clientOperations } from './clients.js';
import { grantOperations } from './grants.js';
import { DEFAULT_RETIRE_AFTER_SECONDS, keyOperations } from './keys.js';
import { changeRecorder } from './record.js';
import type { AdminService, AdminServiceOptions } from './types.js';
import { userOperations } from './users.js';

export type { AdminService, AdminServiceOptions } from './types.js';

// One group of operations per concern, each over the same store and audit recorder.
export function createAdminService(options: AdminServiceOptions): AdminService {
  const context = {
    store: options.store,
    configured: options.configuredClients ?? [],
    longestTokenLifetime: options.longestTokenLifetime ?? DEFAULT_RETIRE_AFTER_SECONDS,
    record: changeRecorder(options.store, options.logger),
  };
  return {
    ...clientOperations(context),
    ...cimdOperations(context),
    ...userOperations(context),
    ...grantOperations(context),
    ...keyOperations(context),
    searchAudit: (query) => options.store.audit.search(query),
  };
}
