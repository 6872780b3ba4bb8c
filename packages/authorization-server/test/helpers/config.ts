/** The configuration check, seen from a test: the problem list of a configuration. */
import { expect } from 'vitest';
import { ConfigError, validateConfig, type AuthorizationServerConfig } from '../../src/config.js';

/** The problems `validateConfig` reports for `config` (none when it passes); any other error fails the test. */
export function configProblems(config: unknown): readonly string[] {
  try {
    validateConfig(config as AuthorizationServerConfig);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}
