/** Errors the storage layer throws on purpose; anything else is a backend failure. */
export class StorageError extends Error {
  constructor(
    message: string,
    /** Stable machine-readable reason. */
    readonly code: 'closed' | 'conflict' | 'not_found' | 'invalid_input' | 'misconfigured',
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
