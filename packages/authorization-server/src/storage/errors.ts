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

/**
 * A store's driver is an optional peer dependency installed by the user who chooses that store;
 * when its package is missing, say which one to install. Any other import failure (a broken
 * install, a native module built for another Node.js) keeps its own message.
 */
export function driverMissing(store: string, pkg: string, error: unknown): StorageError {
  const code = (error as { code?: unknown }).code;
  const message = String((error as Error).message ?? '');
  if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(`'${pkg}'`)) {
    return new StorageError(`the ${store} store needs the ${pkg} package, which is not installed: npm install ${pkg}`, 'unavailable', {
      cause: error,
    });
  }
  return new StorageError(`the ${store} driver (${pkg}) cannot be loaded: ${message.split('\n')[0]}`, 'unavailable', { cause: error });
}
