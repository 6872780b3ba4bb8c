/** Errors the storage layer throws on purpose; anything else is a backend failure. */
export class StorageError extends Error {
  constructor(
    message: string,
    /**
     * Stable machine-readable reason. `misconfigured`: bad configuration or a database from a
     * newer build (never fall back silently); `unavailable`: the driver cannot be loaded here
     * (e.g. better-sqlite3's native module was built for another Node.js version).
     */
    readonly code: 'closed' | 'conflict' | 'not_found' | 'invalid_input' | 'misconfigured' | 'unavailable',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageError';
  }
}

/** The store was closed; the caller keeps using a dead handle. */
export function closedError(): StorageError {
  return new StorageError('store is closed', 'closed');
}
