import { describe, expect, it } from 'vitest';
import { ConfigError as SharedConfigError } from '@mcp-auth-kit/protocol';
import { ConfigError, createResourceServer, type ResourceServerOptions } from '../src/index.js';
import { createThirdPartyTokens } from '../src/core.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { resolveOptions } from '../src/config/resolve.js';
import { configProblemsOf, thrownBy } from '@mcp-auth-kit/test-utils';

const AS = 'http://localhost:9000';

/** The ConfigError createResourceServer throws for `options` (fails the test when it does not). */
function refusal(options: unknown): ConfigError {
  const error = thrownBy(() => createResourceServer(options as ResourceServerOptions));
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
      // the schema's shapes and ranges (config/schema.ts), then the rules of resolve.ts
      'clockTolerance must be a number between 0 and 300',
      'introspection.endpoint must be a URL',
      'introspection.clientSecret is required (a string)',
      'dpop.algorithms must not be empty',
      'dpop.maxAgeSeconds must be a number between 0 and 600',
      'scopesSupported must not contain offline_access (MCP §Refresh Tokens)',
      'scopePolicy must not require offline_access (MCP §Refresh Tokens)',
      'algorithms: "HS256" is not allowed (asymmetric JWS algorithms only)',
      'allowedOrigins contains an invalid origin: "not an origin"',
    ]);
    expect(error.message).toBe(`Invalid resource server configuration:\n${error.problems.map((p) => `  - ${p}`).join('\n')}`);
  });

  it('is the shared ConfigError: a TypeError with code ERR_INVALID_CONFIG', () => {
    const error = refusal({ resource: 'mcp.example.com', authorizationServers: [AS] });
    expect(ConfigError).toBe(SharedConfigError);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toMatchObject({ name: 'ConfigError', code: 'ERR_INVALID_CONFIG', subject: 'resource server' });
  });

  const valid = { resource: 'https://mcp.example.com/mcp', authorizationServers: [AS] };
  it.each([
    [
      'checks that need a valid resource are skipped when it is invalid (default origin, DPoP htu)',
      { resource: 'ftp://x/mcp', authorizationServers: [AS], dpop: true },
      ['resource must be an absolute http(s) URI without fragment or userinfo'],
    ],
    [
      'explicit allowedHosts and dpop.publicUrl are still checked when the resource is invalid',
      {
        resource: 'https://u:p@mcp.example.com/mcp',
        authorizationServers: [AS],
        allowedHosts: ['mcp.example.com/path'],
        dpop: { publicUrl: ['ftp://x/mcp'] },
      },
      [
        'resource must be an absolute http(s) URI without fragment or userinfo',
        'allowedHosts contains an invalid host: "mcp.example.com/path"',
        'dpop.publicUrl contains an invalid URL: "ftp://x/mcp"',
      ],
    ],
    [
      'a list option that is not an array is one problem, not a crash',
      { ...valid, allowedHosts: 'mcp.example.com', algorithms: 'ES256', scopesSupported: 'notes:read', dpop: { publicUrl: 42 } },
      [
        'allowedHosts must be an array',
        'algorithms must be an array',
        'dpop.publicUrl must be a URL or an array of URLs',
        'scopesSupported must be an array of scope strings',
      ],
    ],
    [
      'a field inside an object branch of a union is named, not the union (dpop, cache, replay)',
      {
        ...valid,
        cache: { maxEntries: -1 },
        jwks: { timeoutMs: 'soon', uris: { [AS]: 'not a url' } },
        dpop: { required: 'yes', nonce: { lifetimeSeconds: 7200 }, replay: { maxEntries: 0 } },
        fetch: 'fetch',
      },
      [
        `cache.maxEntries must be a number between 0 and ${Number.MAX_SAFE_INTEGER}`,
        `jwks.timeoutMs must be a number between 0 and ${Number.MAX_SAFE_INTEGER}`,
        `jwks.uris.${AS} must be a URL`,
        'fetch must be a function',
        'dpop.required must be a boolean',
        'dpop.nonce.lifetimeSeconds must be a number between 0 and 3600',
        `dpop.replay.maxEntries must be a number between 1 and ${Number.MAX_SAFE_INTEGER}`,
      ],
    ],
    ['a union that matches no branch is named as a whole', { ...valid, dpop: 'on' }, ['dpop must be a boolean or an object']],
    ['options that are not an object are refused with the same error', undefined, ['options are required']],
  ])('%s', (_, options, problems) => {
    expect(configProblemsOf(() => createResourceServer(options as ResourceServerOptions))).toEqual(problems);
  });

  it('a valid configuration is accepted', async () => {
    const rs = createResourceServer({ resource: 'https://mcp.example.com/mcp', authorizationServers: [AS], dpop: true });
    expect(rs.metadata.resource).toBe('https://mcp.example.com/mcp');
    await rs.close();
  });

  it('createThirdPartyTokens reports its bad options together, in the same error', () => {
    const problems = configProblemsOf(() =>
      createThirdPartyTokens({ issuer: 'not a url', clientId: '', clientSecret: 'b', timeoutMs: 0, tokenEndpoint: 'ftp://as/token' }),
    );
    expect(problems).toEqual([
      'clientId must be a non-empty string',
      'timeoutMs must be a number between 1 and 60000',
      'tokenEndpoint is not https (or http on loopback)',
      'issuer contains whitespace, a control or an invisible character',
    ]);
  });

  it('unset options resolve to the one defaults tree (config/defaults.ts); an explicit undefined keeps the default', () => {
    const resolved = resolveOptions({
      resource: 'https://mcp.example.com/mcp',
      authorizationServers: [AS],
      jwks: { timeoutMs: undefined },
      dpop: true,
      introspection: { endpoint: `${AS}/introspect`, clientId: 'rs', clientSecret: 's' },
      thirdParty: { clientId: 'rs', clientSecret: 's' },
    });
    expect(resolved).toMatchObject({
      clockTolerance: DEFAULTS.clockTolerance,
      cacheMaxEntries: DEFAULTS.cache.maxEntries,
      maxBodyBytes: DEFAULTS.maxBodyBytes,
      serveRootMetadata: DEFAULTS.serveRootMetadata,
      challengeScopes: DEFAULTS.challengeScopes,
      jwks: { ...DEFAULTS.jwks, uris: {} },
      introspection: DEFAULTS.introspection,
      dpop: {
        required: DEFAULTS.dpop.required,
        maxAgeSeconds: DEFAULTS.dpop.maxAgeSeconds,
        clockToleranceSeconds: DEFAULTS.dpop.clockToleranceSeconds,
        replay: DEFAULTS.dpop.replay,
        htu: ['https://mcp.example.com/mcp'],
      },
      thirdParty: {
        authMethod: DEFAULTS.thirdParty.authMethod,
        timeoutMs: DEFAULTS.thirdParty.timeoutMs,
        cacheMaxEntries: DEFAULTS.thirdParty.cache.maxEntries,
        expirySkewSeconds: DEFAULTS.thirdParty.expirySkewSeconds,
      },
    });
  });
});
