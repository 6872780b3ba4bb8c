import { describe, expect, it } from 'vitest';
import { MAX_TOKEN_LIFETIME_SECONDS as MAX_EXPIRES_IN, tokenLifetime as expiresIn } from '@mcp-auth-kit/protocol';
import { ERR, McpAuthClient, McpAuthError } from '../src/index.js';
import { oauthServer, startHostileServer, type Behaviour } from './helpers/hostile-server.js';
import { closeAfterEach } from './helpers/scratch.js';

/**
 * Issue 46 items 5, 8 and 9 (client part): values a server sends are checked before the client
 * uses or stores them. What the CLI shows of them, and the CLI's bounds, are tested in
 * packages/cli/test/server-values.test.ts.
 */
const hostile = closeAfterEach(startHostileServer);
const tokenAnswer = (extra: Record<string, unknown> = {}): Behaviour => ({
  json: { access_token: 'at', token_type: 'Bearer', expires_in: 3600, ...extra },
});

describe('expires_in is checked before it is stored (RFC 6749 §5.1; issue 46 item 8)', () => {
  it('a finite number of seconds ≥ 0, capped at one year; anything else counts as absent', () => {
    expect(expiresIn(3600)).toBe(3600);
    expect(expiresIn(0)).toBe(0);
    expect(expiresIn(1e300)).toBe(MAX_EXPIRES_IN);
    expect(MAX_EXPIRES_IN).toBe(31_536_000);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '3600', null]) expect(expiresIn(bad)).toBeUndefined();
  });
});

describe('AS metadata members of the wrong type or size are refused (RFC 8414 §2; issue 46 items 5, 9)', () => {
  it('token_endpoint_auth_methods_supported: {} is a clear AS_METADATA_INVALID, not a TypeError', async () => {
    const s = await hostile(oauthServer(tokenAnswer(), { registration_endpoint: '/register', token_endpoint_auth_methods_supported: {} }));
    const client = new McpAuthClient({ clientName: 'values test', openAuthorizationUrl: async () => undefined });
    const err = await client.authorize(`${s.base}/mcp`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpAuthError);
    expect((err as McpAuthError).code).toBe(ERR.AS_METADATA_INVALID);
    expect((err as McpAuthError).message).toBe(
      'authorization server metadata "token_endpoint_auth_methods_supported" is not an array of strings',
    );
  });

  it.each([
    ['code_challenge_methods_supported', 'S256'],
    ['scopes_supported', [1, 2]],
    ['revocation_endpoint', 42],
    ['authorization_response_iss_parameter_supported', 'yes'],
  ])('%s of the wrong type is refused', async (key, value) => {
    const s = await hostile(oauthServer(tokenAnswer(), { [key]: value }));
    const err = await new McpAuthClient({ clientName: 'values test' }).discover(`${s.base}/mcp`).catch((e: unknown) => e);
    expect((err as McpAuthError).code).toBe(ERR.AS_METADATA_INVALID);
    expect((err as McpAuthError).message).toContain(`"${key}"`);
  });
});
