import { describe, expect, it } from 'vitest';
import { loadConfig, printableConfig } from '../src/config.js';

describe('auth-server app: DPoP environment (RFC 9449)', () => {
  const secret = Buffer.alloc(32, 3).toString('base64url');

  it('DPOP_NONCE_SECRET and DPOP_REQUIRE_NONCE reach the authorization server config; the secret is masked in --print-config', () => {
    const { config, problems } = loadConfig({ DPOP_NONCE_SECRET: secret, DPOP_REQUIRE_NONCE: '1' });
    expect(problems).toEqual([]);
    expect(config.authorizationServer?.dpop).toEqual({ nonceSecret: secret, requireNonce: true });
    expect(JSON.stringify(printableConfig(config))).not.toContain(secret);
  });

  it('a bad DPOP_NONCE_SECRET or DPOP_REQUIRE_NONCE is a start-up problem', () => {
    const { problems } = loadConfig({ DPOP_NONCE_SECRET: 'too-short', DPOP_REQUIRE_NONCE: 'maybe' });
    expect(problems).toContain('DPOP_REQUIRE_NONCE must be 1 or 0');
    expect(problems.some((p) => p.startsWith('dpop.nonceSecret'))).toBe(true);
  });
});
