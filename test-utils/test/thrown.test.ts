import { describe, expect, it } from 'vitest';
import { thrownBy } from '../src/index.js';

describe('thrownBy', () => {
  it('returns what the function throws, whatever it is', () => {
    const error = new TypeError('bad');
    expect(thrownBy(() => {
      throw error;
    })).toBe(error);
    expect(thrownBy(() => {
      throw 'text';
    })).toBe('text');
  });

  it('fails when the function returns', () => {
    expect(() => thrownBy(() => 42)).toThrow(/expected an error, but nothing was thrown/);
  });
});
