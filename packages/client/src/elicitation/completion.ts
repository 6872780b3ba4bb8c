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
