import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '@mcp-auth-kit/protocol';
import { assertAllowedUrl, resourceMatchesServer, scopeCovers, selectScope, unionScope } from '../src/core.js';
import { ERR } from '../src/index.js';

describe('URL policy (Security Best Practices: SSRF, authorization URL validation)', () => {
  it('loopback hosts are recognised as pure functions (no DNS)', () => {
    for (const h of ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.1.2.3', '[::1]', '::1', '[::ffff:127.0.0.1]'])
      expect(isLoopbackHost(h)).toBe(true);
    for (const h of [
      '10.0.0.1',
      '192.168.1.1',
      '169.254.169.254',
      'example.com',
      'localhost.example.com',
      '127.0.0.1.nip.io',
      '[::ffff:10.0.0.1]',
    ])
      expect(isLoopbackHost(h)).toBe(false);
  });
  it('OAuth 2.1 §1.5: https anywhere, http only to loopback', () => {
    expect(assertAllowedUrl('https://as.example.com/x', 'u').href).toBe('https://as.example.com/x');
    expect(assertAllowedUrl('http://127.0.0.1:9000/x', 'u').href).toBe('http://127.0.0.1:9000/x');
    expect(() => assertAllowedUrl('http://as.example.com/x', 'u')).toThrowError(expect.objectContaining({ code: ERR.URL_FORBIDDEN }));
    expect(assertAllowedUrl('http://as.example.com/x', 'u', { allowInsecureRequests: true }).protocol).toBe('http:');
  });
  it('Security Best Practices: javascript:, data:, file:, vbscript: URLs are refused even with allowInsecureRequests', () => {
    for (const u of ['javascript:alert(1)', 'data:text/html,hi', 'file:///etc/passwd', 'vbscript:msgbox', 'ftp://x/y'])
      expect(() => assertAllowedUrl(u, 'authorization URL', { allowInsecureRequests: true })).toThrowError(
        expect.objectContaining({ code: ERR.URL_FORBIDDEN }),
      );
    expect(() => assertAllowedUrl('not a url', 'u')).toThrowError(expect.objectContaining({ code: ERR.URL_FORBIDDEN }));
  });
  it('RFC 9728 §3.3: PRM resource must identify the server (equal, or a path prefix on the same origin)', () => {
    const server = 'https://h.example/mcp';
    for (const resource of ['https://h.example/mcp', 'https://h.example', 'https://h.example/', 'HTTPS://H.EXAMPLE/mcp']) {
      expect(resourceMatchesServer(resource, server), resource).toBe(true);
    }
    for (const resource of [
      'https://evil.example.com/mcp',
      'https://h.example/mcp2',
      'https://h.example/other',
      'https://h.example/mcp/deeper',
      'http://h.example/mcp',
      'https://h.example:8443/mcp',
      'https://h.example/mcp#frag',
      'not a url',
    ]) {
      expect(resourceMatchesServer(resource, server), resource).toBe(false);
    }
  });
});

describe('MCP Scope Selection Strategy', () => {
  it('uses the challenge scope first', () => {
    expect(selectScope({ challengeScope: 'files:read', scopesSupported: ['a', 'b'] })).toBe('files:read');
  });
  it('falls back to all PRM scopes_supported', () => {
    expect(selectScope({ scopesSupported: ['a', 'b'] })).toBe('a b');
  });
  it('omits scope when scopes_supported is undefined', () => {
    expect(selectScope({})).toBeUndefined();
    expect(selectScope({ asScopesSupported: ['offline_access'], wantRefreshToken: true })).toBeUndefined();
  });
  it('MCP Refresh Tokens: adds offline_access only when the AS lists it and refresh tokens are wanted', () => {
    expect(selectScope({ challengeScope: 'a', asScopesSupported: ['a', 'offline_access'], wantRefreshToken: true })).toBe(
      'a offline_access',
    );
    expect(selectScope({ challengeScope: 'a', asScopesSupported: ['a'], wantRefreshToken: true })).toBe('a');
    expect(selectScope({ challengeScope: 'a', asScopesSupported: ['offline_access'], wantRefreshToken: false })).toBe('a');
  });
  it('Step-Up Authorization Flow: union of previous and challenged scopes, without duplicates', () => {
    expect(unionScope('a b', 'b c')).toBe('a b c');
    expect(unionScope(undefined, 'c')).toBe('c');
    expect(unionScope(undefined, undefined)).toBeUndefined();
    expect(scopeCovers('a b c', 'c a')).toBe(true);
    expect(scopeCovers('a', 'a b')).toBe(false);
  });
});
