/** What each group of admin operations works with: the store, the configured clients, the audit recorder. */
import type { ClientMetadata } from '../config/types.js';
import type { Store } from '../storage/types.js';
import type { ChangeRecorder } from './record.js';

export interface AdminContext {
  store: Store;
  /** The configured (pre-registered) clients, to tell their origin. */
  configured: readonly ClientMetadata[];
  /** Seconds: a retired signing key stays published at least this long. */
  longestTokenLifetime: number;
  /** Every change writes its audit event through this. */
  record: ChangeRecorder;
}
