/**
 * Issue 43: one error type carries every configuration problem of the app too — environment,
 * authorization-server options and the store together, in one ConfigError, before any socket
 * is opened or any database reached.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@mcp-auth-kit/protocol';
import { configFromEnv, startAuthServer } from '../src/index.js';
import { adminStorage } from '../src/admin.js';
import { expectProblems } from './helpers/problems.js';

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('nothing was thrown');
}

describe('the app reports every configuration problem in one ConfigError (issue 43)', () => {
  it('environment: a bad port, a non-loopback http issuer and a bad PostgreSQL schema name, together', () => {
    const { problems } = thrown(() =>
      configFromEnv({
        AS_PORT: 'x',
        AS_ISSUER: 'http://auth.example.com',
        // loopback, and never connected: refused before anything is opened
        DATABASE_URL: 'postgres://u@127.0.0.1:1/db',
        DATABASE_SCHEMA: 'bad-name',
        DPOP_REQUIRE_NONCE: 'maybe',
      }),
    );
    expectProblems(problems, [
      /AS_PORT must be a port number/,
      /issuer: must use https/,
      /storage\.schema: PostgreSQL schema must match/,
      /DPOP_REQUIRE_NONCE must be 1 or 0/,
    ]);
  });

  it('startAuthServer: a dev switch in production and a bad store are refused together, before listening', async () => {
    const error = await startAuthServer({
      production: true,
      cimdAllowPrivateNetwork: true,
      databaseUrl: 'mysql://root:hunter2@127.0.0.1/db',
      logger: { info() {}, warn() {}, error() {} },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const { problems } = error as ConfigError;
    const text = expectProblems(problems, [
      /cimd\.allowPrivateNetwork \(CIMD_ALLOW_PRIVATE_NETWORK\): dev-only switch refused in production/,
      /DATABASE_URL must start with postgres:\/\//,
    ]);
    expect(text).not.toContain('hunter2');
  });

  it('startAuthServer: an issuer that is no URL is a ConfigError with the other problems, not a TypeError', async () => {
    const error = await startAuthServer({
      port: 0,
      issuer: 'not a url',
      storage: { kind: 'memory' },
      authorizationServer: { accessTokenTTL: -1 },
      logger: { info() {}, warn() {}, error() {} },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const text = (error as ConfigError).problems.join('\n');
    expect(text).toMatch(/^issuer: must be an absolute URL/m);
    expect(text).toMatch(/^accessTokenTTL: must be a positive integer/m);
  });

  it('the admin tool reports an unreadable configuration as a ConfigError too, every problem listed', () => {
    const error = thrown(() => adminStorage({ AS_CONFIG_FILE: '/nonexistent/as-config.json', AS_PORT: 'x' }));
    expect(error.message).toMatch(/cannot tell which store to open/);
    expect(error.problems.join('\n')).toMatch(/AS_CONFIG_FILE: cannot read/);
    expect(error.problems.join('\n')).toMatch(/AS_PORT must be a port number/);
  });
});
