/** Helpers shared by the in-process store's parts. */

/** Values are copied in and out as JSON, so callers see exactly what a database would give back. */
export function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Two strings as one map key (a model and its id, a namespace and its key). */
export const pairKey = (first: string, second: string) => `${first}\u0000${second}`;
