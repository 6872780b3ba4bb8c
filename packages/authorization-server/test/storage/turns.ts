/** Waiting in the storage tests: batches and commit groups gather the writes of one turn of the event loop. */

/** Resolves in the next turn: what was submitted before has gone as one batch or group. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Resolves after `ms` (rows and entries written with a short expiry have expired). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
