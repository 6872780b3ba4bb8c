import { ERR, McpAuthError } from './errors.js';
import { MAX_AS_METADATA_BYTES } from './discovery.js';

/**
 * Bounds of every record the client stores from what servers sent (review r46 F2): the PRM's
 * values in the server binding, the registration response, the token response. The store is read
 * whole by every later command, so a server that sends megabytes per value must not make it grow;
 * real values are a few KiB (a JWT access token rarely exceeds 8 KiB). One place decides them;
 * `test/stored-values.test.ts` enumerates every store setter and the cap it applies.
 */
export const STORED_VALUE_LIMITS = Object.freeze({
  /** Any string value of a stored record (token, secret, scope, URL, …). */
  maxStringBytes: 16 * 1024,
  /** Any list (e.g. the PRM's `scopes_supported`). */
  maxListEntries: 256,
  /** The whole record, as JSON, per kind. */
  maxRecordBytes: Object.freeze({
    client: 32 * 1024,
    tokens: 64 * 1024,
    // the AS metadata it carries has its own bound, checked at discovery (MAX_AS_METADATA_BYTES)
    server: MAX_AS_METADATA_BYTES + 32 * 1024,
    dpopKey: 16 * 1024,
  }),
});

export type StoredRecordKind = keyof typeof STORED_VALUE_LIMITS.maxRecordBytes;

const WHAT: Record<StoredRecordKind, string> = {
  client: 'client registration',
  tokens: 'token response',
  server: 'server binding (protected resource metadata)',
  dpopKey: 'DPoP key',
};

/**
 * Refuses a record over its bounds with a clear error before anything is stored. `as_metadata`
 * members are not held to the string and list bounds (their document is bounded as a whole).
 */
export function assertStorable(kind: StoredRecordKind, record: object): void {
  const { maxStringBytes, maxListEntries, maxRecordBytes } = STORED_VALUE_LIMITS;
  const refuse = (detail: string) =>
    new McpAuthError(ERR.RESPONSE_TOO_LARGE, `the ${WHAT[kind]} a server sent is too large to keep (${detail}); refused, nothing stored`);
  const walk = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      const size = Buffer.byteLength(value);
      if (size > maxStringBytes) throw refuse(`"${path}" is ${size} bytes, more than ${maxStringBytes}`);
    } else if (Array.isArray(value)) {
      if (value.length > maxListEntries) throw refuse(`"${path}" has ${value.length} entries, more than ${maxListEntries}`);
      for (const v of value) walk(v, path);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value))
        if (!(kind === 'server' && k === 'as_metadata' && path === '')) walk(v, path ? `${path}.${k}` : k);
    }
  };
  walk(record, '');
  const size = Buffer.byteLength(JSON.stringify(record));
  if (size > maxRecordBytes[kind]) throw refuse(`${size} bytes, more than ${maxRecordBytes[kind]}`);
}
