import { describe, expect, it } from 'vitest';
import { ConfigError as SharedConfigError } from '@mcp-auth-kit/protocol';
import { ConfigError, createResourceServer, type ResourceServerOptions } from '../src/index.js';

const AS = 'http://localhost:9000';

/** The ConfigError createResourceServer throws for `options` (fails the test when it does not). */
function refusal(options: unknown): ConfigError {
  let error: unknown;
  try {
    createResourceServer(options as ResourceServerOptions);
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('createResourceServer options: one ConfigError listing every problem', () => {
  it('lists several bad options at once, in one message', () => {
    const error = refusal({
      resource: 'https://mcp.example.com/mcp#fragment',
      authorizationServers: [AS, 'https://as.example.com?tenant=1'],
      scopesSupported: ['notes:read', 'offline_access'],
      algorithms: ['HS256'],
      allowedOrigins: ['not an origin'],
      clockTolerance: 1000,
      introspection: { endpoint: 'nowhere', clientId: 'rs' },
      dpop: { algorithms: [], maxAgeSeconds: 100_000 },
    });
    expect(error.problems).toEqual([
      'resource must be an absolute http(s) URI without fragment or userinfo',
      'authorizationServers contains an invalid issuer: "https://as.example.com?tenant=1"',
      'scopesSupported must not contain offline_access (MCP §Refresh Tokens)',
      'scopePolicy must not require offline_access (MCP §Refresh Tokens)',
      'algorithms: "HS256" is not allowed (asymmetric JWS algorithms only)',
      'allowedOrigins contains an invalid origin: "not an origin"',
      'introspection.endpoint must be a URL',
      'introspection.clientId and introspection.clientSecret are required',
      'clockTolerance must be a number between 0 and 300',
      'dpop.algorithms must not be empty',
      'dpop.maxAgeSeconds must be a number between 0 and 600',
    ]);
    expect(error.message).toBe(`Invalid resource server configuration:\n${error.problems.map((p) => `  - ${p}`).join('\n')}`);
  });

  it('is the shared ConfigError: a TypeError with code ERR_INVALID_CONFIG', () => {
    const error = refusal({ resource: 'mcp.example.com', authorizationServers: [AS] });
    expect(ConfigError).toBe(SharedConfigError);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toMatchObject({ name: 'ConfigError', code: 'ERR_INVALID_CONFIG', subject: 'resource server' });
  });

  it('checks that need a valid resource are skipped when it is invalid (default origin, DPoP htu)', () => {
    expect(refusal({ resource: 'ftp://x/mcp', authorizationServers: [AS], dpop: true }).problems).toEqual([
      'resource must be an absolute http(s) URI without fragment or userinfo',
    ]);
  });

  it('explicit allowedHosts and dpop.publicUrl are still checked when the resource is invalid', () => {
    const error = refusal({
      resource: 'https://u:p@mcp.example.com/mcp',
      authorizationServers: [AS],
      allowedHosts: ['mcp.example.com/path'],
      dpop: { publicUrl: ['ftp://x/mcp'] },
    });
    expect(error.problems).toEqual([
      'resource must be an absolute http(s) URI without fragment or userinfo',
      'allowedHosts contains an invalid host: "mcp.example.com/path"',
      'dpop.publicUrl contains an invalid URL: "ftp://x/mcp"',
    ]);
  });

  it('a list option that is not an array is one problem, not a crash', () => {
    const error = refusal({
      resource: 'https://mcp.example.com/mcp',
      authorizationServers: [AS],
      allowedHosts: 'mcp.example.com',
      algorithms: 'ES256',
      scopesSupported: 'notes:read',
      dpop: { publicUrl: 42 },
    });
    expect(error.problems).toEqual([
      'scopesSupported must be an array of scope strings',
      'algorithms must be an array',
      'allowedHosts must be an array',
      'dpop.publicUrl must be an array',
    ]);
  });

  it('options that are not an object are refused with the same error', () => {
    expect(refusal(undefined).problems).toEqual(['options are required']);
  });

  it('a valid configuration is accepted', async () => {
    const rs = createResourceServer({ resource: 'https://mcp.example.com/mcp', authorizationServers: [AS], dpop: true });
    expect(rs.metadata.resource).toBe('https://mcp.example.com/mcp');
    await rs.close();
  });
});
