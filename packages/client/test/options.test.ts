import { describe, expect, it } from 'vitest';
import { ConfigError } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthClient, type McpAuthClientOptions } from '../src/index.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { resolveClientOptions } from '../src/config/resolve.js';
import { thrownBy } from '@mcp-auth-kit/test-utils';

/** The error `new McpAuthClient(options)` throws (fails the test when it does not). */
function refusal(options: unknown): Error & { code?: string; cause?: unknown } {
  const error = thrownBy(() => new McpAuthClient(options as McpAuthClientOptions));
  expect(error).toBeInstanceOf(Error);
  return error as Error & { code?: string; cause?: unknown };
}

describe('McpAuthClient options: every problem reported together (issue 43)', () => {
  it('lists several bad options at once: MCP_AUTH_INVALID_ARGUMENT whose cause is the shared ConfigError', () => {
    const error = refusal({
      clientName: '',
      clientMetadataUrl: 'http://app.example/client.json',
      requestTimeoutMs: 0,
      maxMessageBytes: Number.POSITIVE_INFINITY,
      dpop: 'sometimes',
      loopback: { host: '127.0.0.1', port: 70_000 },
      // MCP Authorization Server Binding: credentials without their issuer
      clientCredentials: { client_id: 'svc', client_secret: 's' },
      preRegistered: [{ client_id: 'p', issuer: 'https://as.example#frag' }],
    });
    expect(error.code).toBe(ERR.INVALID_ARGUMENT);
    expect(error.cause).toBeInstanceOf(ConfigError);
    const problems = (error.cause as ConfigError).problems;
    expect(problems).toEqual([
      '"clientName" is required',
      '"loopback.port" must be a port number (0: any)',
      '"clientMetadataUrl" must be an https URL with a path',
      '"requestTimeoutMs" must be a finite number greater than 0',
      '"maxMessageBytes" must be a finite number greater than 0',
      '"dpop" must be "auto", "always" or "never"',
      expect.stringMatching(/^"clientCredentials.issuer" is required: /),
      '"preRegistered[0].issuer" must be an issuer identifier without query or fragment (RFC 8414 §2)',
    ]);
    // the message names every problem too, so a log line shows all of them
    for (const problem of problems) expect(error.message).toContain(problem);
  });

  it('options that are not an object are one problem, not a crash', () => {
    const error = refusal(undefined);
    expect(error.code).toBe(ERR.INVALID_ARGUMENT);
    expect((error.cause as ConfigError).problems).toEqual(['options must be an object']);
  });

  it('unset options resolve to the one defaults tree (config/defaults.ts); blockPrivateNetworks folds into privateNetworks', () => {
    const resolved = resolveClientOptions({ clientName: 'x', requestTimeoutMs: undefined, loopback: { path: undefined } });
    expect(resolved).toMatchObject({
      authorizationTimeoutMs: DEFAULTS.authorizationTimeoutMs,
      refreshTokens: DEFAULTS.refreshTokens,
      maxStepUpAttempts: DEFAULTS.maxStepUpAttempts,
      expirySkewSeconds: DEFAULTS.expirySkewSeconds,
      requestTimeoutMs: DEFAULTS.requestTimeoutMs,
      maxResponseBytes: DEFAULTS.maxResponseBytes,
      maxMessageBytes: DEFAULTS.maxMessageBytes,
      privateNetworks: DEFAULTS.privateNetworks,
      dpop: DEFAULTS.dpop,
      legacyDiscovery: DEFAULTS.legacyDiscovery,
      // the listener applies its defaults; an unset port means "reuse the registered one"
      loopback: {},
    });
    expect(resolveClientOptions({ clientName: 'x', privateNetworks: 'allow', blockPrivateNetworks: true }).privateNetworks).toBe('block');
  });
});
