import type { UrlElicitationPrompt } from './url-elicitation-request.js';

/**
 * The 2025-11-25 `notifications/elicitation/complete` notifications a client waits for, by
 * `elicitationId`. Clients MUST ignore a notification for an unknown or already completed id
 * (MCP 2025-11-25 elicitation §Completion Notifications): only an id registered with
 * {@link CompletionWaiters.expect}, and not yet completed, ends a wait.
 */
export class CompletionWaiters {
  readonly #pending = new Map<string, () => void>();

  /** Waits for the completion of `elicitationId`; `dispose()` when no longer waiting. */
  expect(elicitationId: string): { done: Promise<void>; dispose: () => void } {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.#pending.set(elicitationId, resolve);
    return {
      done,
      dispose: () => {
        if (this.#pending.get(elicitationId) === resolve) this.#pending.delete(elicitationId);
      },
    };
  }

  /** A completion notification: ends the wait for that id, if one is pending; anything else is ignored. */
  complete(elicitationId: unknown): void {
    if (typeof elicitationId !== 'string') return;
    const resolve = this.#pending.get(elicitationId);
    if (!resolve) return;
    this.#pending.delete(elicitationId);
    resolve();
  }
}

/** How a wait for a page's completion may end besides the server's notification. */
export interface CompletionLimits {
  /** The user's own "done" (`waitForCompletion` of the options). */
  byUser?: ((prompt: UrlElicitationPrompt, signal: AbortSignal) => Promise<void>) | undefined;
  /** The time limit, after which the request is retried anyway. */
  timeoutMs: number;
}

/** Waits for the first of: the completion notification, the user's own signal, the time limit, an abort of `outer`. */
export async function awaitCompletion(
  prompt: UrlElicitationPrompt,
  notified: Promise<void> | undefined,
  limits: CompletionLimits,
  outer?: AbortSignal,
): Promise<void> {
  if (!notified && !limits.byUser) return;
  const ended = new AbortController();
  const races: Promise<unknown>[] = [];
  if (notified) races.push(notified);
  if (limits.byUser) {
    const byUser = limits.byUser(prompt, ended.signal);
    byUser.catch(() => undefined); // settles after the race is decided: not an unhandled rejection
    races.push(byUser);
  }
  races.push(timeLimit(limits.timeoutMs, ended.signal));
  if (outer) races.push(abortOf(outer, ended.signal));
  try {
    await Promise.race(races);
  } finally {
    ended.abort();
  }
}

/** Resolves after `ms`, unless `ended` aborts first (its timer then cleared). */
function timeLimit(ms: number, ended: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
    ended.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });
}

/** Rejects with `outer`'s reason once it aborts; stops listening when `ended` aborts. */
function abortOf(outer: AbortSignal, ended: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    const onAbort = () => reject(outer.reason);
    if (outer.aborted) onAbort();
    outer.addEventListener('abort', onAbort, { once: true });
    ended.addEventListener('abort', () => outer.removeEventListener('abort', onAbort), { once: true });
  });
}
