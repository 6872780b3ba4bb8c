import { describe, expect, it } from 'vitest';
import { authorizationServerMetadataUrls, protectedResourceMetadataUrl, protectedResourceMetadataUrls } from '../src/metadata-urls.js';

describe('RFC 9728 §3.1: the Protected Resource Metadata URL inserts the resource path', () => {
  it.each([
    ['http://localhost:3000/mcp', 'http://localhost:3000/.well-known/oauth-protected-resource/mcp'],
    ['https://a.example', 'https://a.example/.well-known/oauth-protected-resource'],
    ['https://a.example/', 'https://a.example/.well-known/oauth-protected-resource'],
    ['https://a.example/public/mcp', 'https://a.example/.well-known/oauth-protected-resource/public/mcp'],
    ['https://a.example/mcp/', 'https://a.example/.well-known/oauth-protected-resource/mcp'],
    ['https://a.example/mcp?x=1', 'https://a.example/.well-known/oauth-protected-resource/mcp'],
  ])('%s → %s', (resource, url) => expect(protectedResourceMetadataUrl(resource)).toBe(url));
});

describe('MCP §Protected Resource Metadata Discovery: URL order', () => {
  it('the challenge resource_metadata, else path-based well-known, else root', () => {
    expect(protectedResourceMetadataUrls('https://h.example/public/mcp', 'https://h.example/custom').map(String)).toEqual([
      'https://h.example/custom',
    ]);
    expect(protectedResourceMetadataUrls('https://h.example/public/mcp').map(String)).toEqual([
      'https://h.example/.well-known/oauth-protected-resource/public/mcp',
      'https://h.example/.well-known/oauth-protected-resource',
    ]);
    expect(protectedResourceMetadataUrls('https://h.example/').map(String)).toEqual([
      'https://h.example/.well-known/oauth-protected-resource',
    ]);
  });
});

describe('MCP §Authorization Server Metadata Discovery: URL order (RFC 8414 §3.1, OIDC Discovery §4)', () => {
  it('issuer without a path: RFC 8414, then OpenID Connect', () => {
    for (const issuer of ['https://as.example', 'https://as.example/']) {
      expect(authorizationServerMetadataUrls(issuer).map(String)).toEqual([
        'https://as.example/.well-known/oauth-authorization-server',
        'https://as.example/.well-known/openid-configuration',
      ]);
    }
  });
  it('issuer with a path: RFC 8414 path insertion, OIDC path insertion, OIDC path appending', () => {
    expect(authorizationServerMetadataUrls('https://as.example/tenant/1').map(String)).toEqual([
      'https://as.example/.well-known/oauth-authorization-server/tenant/1',
      'https://as.example/.well-known/openid-configuration/tenant/1',
      'https://as.example/tenant/1/.well-known/openid-configuration',
    ]);
  });
});
