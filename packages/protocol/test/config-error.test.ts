import { describe, expect, it } from 'vitest';
import { ConfigError, INVALID_CONFIG } from '../src/index.js';

describe('ConfigError', () => {
  it('lists every problem in the message, under a header naming the subject', () => {
    const error = new ConfigError(['issuer: must be an absolute URL', 'resources: at least one'], 'authorization server');
    expect(error.message).toBe(
      'Invalid authorization server configuration:\n  - issuer: must be an absolute URL\n  - resources: at least one',
    );
    expect(error.subject).toBe('authorization server');
  });

  it('without a subject the header is "Invalid configuration:"', () => {
    expect(new ConfigError(['AS_PORT must be a port number (0-65535)']).message).toBe(
      'Invalid configuration:\n  - AS_PORT must be a port number (0-65535)',
    );
  });

  it('has a name, a stable code, and is a TypeError (callers catching TypeError keep working)', () => {
    const error = new ConfigError(['x']);
    expect(error.name).toBe('ConfigError');
    expect(error.code).toBe('ERR_INVALID_CONFIG');
    expect(INVALID_CONFIG).toBe('ERR_INVALID_CONFIG');
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toMatch(/^ConfigError: Invalid configuration:/);
    expect(error.stack).toMatch(/^ConfigError: /);
  });

  it('keeps its own frozen copy of the problems', () => {
    const problems = ['a'];
    const error = new ConfigError(problems);
    problems.push('b');
    expect(error.problems).toEqual(['a']);
    expect(Object.isFrozen(error.problems)).toBe(true);
  });
});
