import type { RejectionReason } from './errors.js';
import type { ResourceServerLogger } from './types.js';

/** What `ResourceServerLogger.onValidation` receives: one call per protected request. */
export type ValidationOutcome = { ok: true; source: 'jwt' | 'introspection' } | { ok: false; reason: RejectionReason; status: number };

/** Metrics must never break a request: a throwing hook is ignored. */
export function notifyValidation(logger: ResourceServerLogger | undefined, outcome: ValidationOutcome): void {
  try {
    logger?.onValidation?.(outcome);
  } catch {
    // ignored on purpose
  }
}
