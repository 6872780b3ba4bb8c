import { describe, expect, it } from 'vitest';
import { ConfigError } from '@mcp-auth-kit/protocol';
import { configProblemsOf, thrownBy } from '../src/index.js';

describe('thrownBy', () => {
  it('returns what the function throws, whatever it is', () => {
    const error = new TypeError('bad');
    expect(
      thrownBy(() => {
        throw error;
      }),
    ).toBe(error);
    expect(
      thrownBy(() => {
        throw 'text';
      }),
    ).toBe('text');
  });

  it('fails when the function returns', () => {
    expect(() => thrownBy(() => 42)).toThrow(/expected an error, but nothing was thrown/);
  });
});

describe('configProblemsOf', () => {
  it('the problems of a ConfigError, thrown or as the cause of another error', () => {
    const config = new ConfigError(['a: bad', 'b: bad']);
    expect(
      configProblemsOf(() => {
        throw config;
      }),
    ).toEqual(['a: bad', 'b: bad']);
    expect(
      configProblemsOf(() => {
        throw new Error('wrapped', { cause: config });
      }),
    ).toEqual(['a: bad', 'b: bad']);
  });

  it('fails for another error or none', () => {
    expect(() =>
      configProblemsOf(() => {
        throw new TypeError('not a config error');
      }),
    ).toThrow(/expected a configuration error/);
    expect(() => configProblemsOf(() => undefined)).toThrow(/nothing was thrown/);
  });
});
