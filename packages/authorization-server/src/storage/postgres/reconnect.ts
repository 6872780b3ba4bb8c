/**
 * Riding out dropped PostgreSQL connections (a database restart, a failover, a proxy or an
 * administrator closing backends).
 *
 * The pool replaces a connection once it notices the drop, but a statement may be handed a
 * connection whose backend is already gone and fail in the meantime. A statement that gives
 * the same result when run twice (a read, an upsert of given values, a delete by key) is then
 * retried on another connection. One whose effect must happen at most once is not simply
 * repeated, because a dropped reply cannot tell whether the server ran it: the conditional
 * consume checks the row first (see `PgModels.consume`), a counter increment fails, and the
 * request fails cleanly with `server_error`.
 */

/** SQLSTATE classes and codes that mean "this connection is gone", not "this statement is wrong". */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
const CONNECTION_ERRNOS = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT', 'ENOTCONN', 'ECONNABORTED']);
/** node-postgres reports a socket closed under it with these messages (no code). */
const CONNECTION_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable)/;

/** True when `error` says the connection (not the statement) failed. */
export function isConnectionLoss(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (CONNECTION_SQLSTATES.has(code) || code.startsWith('08')) return true;
    if (CONNECTION_ERRNOS.has(code)) return true;
  }
  return typeof message === 'string' && CONNECTION_MESSAGES.test(message);
}

/** Attempts in all (the first one included) for a statement that is safe to repeat. */
export const RECONNECT_ATTEMPTS = 3;

/**
 * Runs `run` again (up to {@link RECONNECT_ATTEMPTS} in all, after a short pause that lets the
 * pool discard dead connections) while it fails with a connection loss. Only for work that is
 * safe to repeat; any other error is thrown at once.
 */
export async function retryOnConnectionLoss<T>(run: () => Promise<T>, pauseMs = 20): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= RECONNECT_ATTEMPTS || !isConnectionLoss(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, pauseMs * attempt));
    }
  }
}
