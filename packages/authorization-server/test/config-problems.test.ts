/**
 * Issue 43: one error type carries every configuration problem. Several problems at once —
 * options, dev switches, DPoP, ID-JAG and the store — come back together in one ConfigError,
 * before anything is opened.
 */
import { describe, expect, it } from 'vitest';
import { configProblems } from './helpers/config.js';
import { ConfigError } from '@mcp-auth-kit/protocol';
import { createAuthorizationServer } from '../src/server.js';
import { resolveConfig, type AuthorizationServerConfig } from '../src/config.js';
import { silentLogger } from '../src/ops/logger.js';
import { DEFAULTS } from '../src/config/defaults.js';

const valid: AuthorizationServerConfig = {
  issuer: 'http://localhost:9000',
  resources: [{ resource: 'http://localhost:3000/mcp', scopes: { 'notes:read': 'Read' } }],
  storage: { kind: 'memory' },
  logger: silentLogger,
};

async function refusal(config: unknown): Promise<ConfigError> {
  const error = await createAuthorizationServer(config as AuthorizationServerConfig).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('one ConfigError carries every configuration problem (issue 43)', () => {
  it('options, dev switches, DPoP, ID-JAG and the PostgreSQL schema name are reported together', async () => {
    const { problems } = await refusal({
      ...valid,
      issuer: 'https://auth.example.com',
      accessTokenTTL: 0,
      devAutoLogin: 'demo',
      registration: { rateLimit: { max: 0, windowSeconds: 60 }, initialAccessToken: 'short' },
      loginThrottle: { perUser: -1, burst: 3 },
      metrics: { enabled: 'yes' },
      dpop: { algorithms: ['HS256'] },
      idJag: { trustedIdps: [] },
      // never opened: the schema name would be interpolated into SQL
      storage: { kind: 'postgres', url: 'postgres://u@127.0.0.1:1/db', schema: 'x; drop table' },
    });
    const text = problems.join('\n');
    expect(text).toMatch(/^accessTokenTTL: must be a positive integer \(seconds\)$/m);
    expect(text).toMatch(/^devAutoLogin: refused because the issuer host "auth\.example\.com" is not loopback/m);
    expect(text).toMatch(/^registration\.rateLimit: max and windowSeconds must be positive integers$/m);
    expect(text).toMatch(/^registration\.initialAccessToken: must be a string of at least 16 characters$/m);
    expect(text).toMatch(/^loginThrottle\.perUser: must be a positive integer$/m);
    expect(text).toMatch(/^loginThrottle\.burst: unknown field$/m);
    expect(text).toMatch(/^metrics\.enabled: must be a boolean$/m);
    expect(text).toMatch(/^dpop\.algorithms: "HS256"/m);
    expect(text).toMatch(/^idJag\.trustedIdps: must list at least one/m);
    expect(text).toMatch(/^storage\.schema: PostgreSQL schema must match/m);
    expect(problems).toHaveLength(10);
  });

  it('the store is checked with everything else: unknown kind, SQLite without a file, a non-PostgreSQL URL (never echoed)', () => {
    expect(configProblems({ ...valid, sessionTTL: -1, storage: { kind: 'mongo' } })).toEqual([
      'sessionTTL: must be a positive integer (seconds)',
      'storage.kind: must be "memory", "sqlite" or "postgres" (or pass an open Store)',
    ]);
    expect(configProblems({ ...valid, storage: { kind: 'sqlite', driver: 'sqlite3' } })).toEqual([
      'storage.file: the SQLite database path is required',
      'storage.driver: must be "node" or "better-sqlite3"',
    ]);
    const secretUrl = configProblems({ ...valid, storage: { kind: 'postgres', url: 'mysql://root:hunter2@db/x' } });
    expect(secretUrl).toEqual(['storage.url: must be a postgres:// or postgresql:// URL']);
    expect(configProblems({ ...valid, storage: undefined }).join()).toMatch(/^storage: required/);
  });

  it('resolves over the one defaults tree', () => {
    const resolved = resolveConfig({ ...valid, refreshTokens: { ttl: 60 }, loginThrottle: { perUser: 7 } });
    expect(resolved.accessTokenTTL).toBe(DEFAULTS.accessTokenTTL);
    expect(resolved.refreshTokens).toEqual({ ...DEFAULTS.refreshTokens, ttl: 60 });
    expect(resolved.loginThrottle).toEqual({ ...DEFAULTS.loginThrottle, perUser: 7 });
    expect(resolved.registration.rateLimit).toEqual(DEFAULTS.registration.rateLimit);
    expect(resolved.serviceName).toBe('localhost:9000');
    expect(resolved.dpop.algorithms).toEqual([...DEFAULTS.dpop.algorithms]);
    expect(resolveConfig({ ...valid, registration: { rateLimit: false } }).registration.rateLimit).toBe(false);
  });
});
