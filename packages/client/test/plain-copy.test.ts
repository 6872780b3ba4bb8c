import { describe, expect, it } from 'vitest';
import { copyPlainTree, isPlainTree } from '../src/plain-copy.js';

describe('plain-copy: the memory store’s fast copy, only where it equals structuredClone', () => {
  const binding = {
    server: 'https://rs.example/mcp',
    resource: 'https://rs.example/mcp',
    issuer: 'https://as.example',
    as_metadata: { issuer: 'https://as.example', scopes_supported: ['a', 'b'], nested: [{ x: 1 }, [null, true]] },
    dpop_supported: false,
    expires_at: 1_700_000_000,
    none: undefined,
  };

  it('copies a plain tree deeply: equal to structuredClone, sharing no object with the original', () => {
    expect(isPlainTree(binding)).toBe(true);
    const copy = copyPlainTree(binding);
    expect(copy).toStrictEqual(structuredClone(binding));
    expect(Object.keys(copy)).toEqual(Object.keys(binding));
    expect(copy).not.toBe(binding);
    expect(copy.as_metadata).not.toBe(binding.as_metadata);
    expect(copy.as_metadata.scopes_supported).not.toBe(binding.as_metadata.scopes_supported);
    expect(copy.as_metadata.nested[0]).not.toBe(binding.as_metadata.nested[0]);
    copy.as_metadata.scopes_supported.push('c');
    expect(binding.as_metadata.scopes_supported).toEqual(['a', 'b']);
  });

  it.each([
    ['a Date', { at: new Date(0) }],
    ['a Map', { m: new Map([[1, 2]]) }],
    ['a typed array', { b: new Uint8Array(2) }],
    ['a class instance', { u: new URL('https://as.example') }],
    ['an object without prototype', { o: Object.create(null) as object }],
    ['a function', { f: () => 1 }],
    ['a symbol value', { s: Symbol('s') }],
    ['a symbol key', { [Symbol('k')]: 1 }],
    ['an own __proto__ key', JSON.parse('{"__proto__": {"polluted": true}}') as object],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is tested
    ['a sparse array', { a: [1, , 3] }],
    ['an array with an extra member', { a: Object.assign([1], { extra: true }) }],
    ['an accessor', Object.defineProperty({}, 'x', { get: () => 1, enumerable: true })],
    ['a non-enumerable member', Object.defineProperty({}, 'x', { value: 1, enumerable: false })],
  ])('leaves %s to structuredClone', (_, value) => expect(isPlainTree(value)).toBe(false));

  it('leaves shared and cyclic members to structuredClone (it keeps them shared; a plain copy would not)', () => {
    const shared = { x: 1 };
    expect(isPlainTree({ a: shared, b: shared })).toBe(false);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(isPlainTree(cyclic)).toBe(false);
  });

  it('leaves very deep trees to structuredClone (no deep recursion on the read path)', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) deep = { deep };
    expect(isPlainTree(deep)).toBe(false);
    expect(isPlainTree({ a: { b: { c: { d: 1 } } } })).toBe(true);
  });
});
