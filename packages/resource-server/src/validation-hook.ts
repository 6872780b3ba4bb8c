import type { ResourceServerLogger, ValidationOutcome } from './types.js';

export type { ValidationOutcome };

/** Metrics must never break a request: a throwing hook is ignored. */
export function notifyValidation(logger: ResourceServerLogger | undefined, outcome: ValidationOutcome): void {
  try {
    logger?.onValidation?.(outcome);
  } catch {
    // ignored on purpose
  }
}
