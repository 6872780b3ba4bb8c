/**
 * Copies of JSON-like trees, for the memory store's reads. `structuredClone` is exact for any
 * value but costs about 5 times a plain walk on the small objects a client reads on every MCP
 * request (its tokens, its server binding). A value the store holds is first classified, once,
 * when it is stored; only what {@link isPlainTree} accepts is then copied with {@link copyPlainTree}.
 */

/** Deeper trees are left to `structuredClone` (a client's entries are a few levels deep). */
const MAX_DEPTH = 32;

/**
 * Whether `value` is a tree of plain data that {@link copyPlainTree} copies exactly: primitives,
 * plain objects (`Object.prototype`, no own `__proto__` key, every own key enumerable and a data
 * property) and dense arrays without extra members; no object reached twice (no cycle, no shared
 * member, which `structuredClone` would keep shared).
 */
export function isPlainTree(value: unknown): boolean {
  return plain(value, new Set(), 0);
}

function plain(value: unknown, seen: Set<object>, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'function' && typeof value !== 'symbol';
  if (depth > MAX_DEPTH || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    const keys = Reflect.ownKeys(value);
    // indices 0..n-1 and `length`, nothing else
    if (keys.length !== value.length + 1) return false;
    for (let i = 0; i < value.length; i++) {
      if (!Object.hasOwn(value, i) || !plain(value[i], seen, depth + 1)) return false;
    }
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key !== 'string' || key === '__proto__') return false;
    const descriptor = Object.getOwnPropertyDescriptor(value, key)!;
    if (!descriptor.enumerable || !('value' in descriptor) || !plain(descriptor.value, seen, depth + 1)) return false;
  }
  return true;
}

/** A deep copy of a value {@link isPlainTree} accepted (anything else: use `structuredClone`). */
export function copyPlainTree<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyPlainTree) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyPlainTree((value as Record<string, unknown>)[key]);
  return copy as T;
}
