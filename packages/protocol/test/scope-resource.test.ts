import { describe, expect, it } from 'vitest';
import { canonicalResource } from '../src/resource-uri.js';
import { isScopeToken, splitScope } from '../src/scope.js';

describe('RFC 6749 §3.3 scope-token grammar', () => {
  it.each(['notes:read', 'a', '!', '#$%&', 'https://scopes.example/x', '~'])('%j is a scope-token', (token) =>
    expect(isScopeToken(token)).toBe(true),
  );
  it.each(['', ' ', 'a b', 'a"b', 'a\\b', 'é', 'a\nb', '\x7f', undefined, 42])('%j is not', (token) =>
    expect(isScopeToken(token)).toBe(false),
  );
  it('splitScope: tokens in order, de-duplicated, runs of white space are one separator', () => {
    expect(splitScope('a b  a\tc')).toEqual(['a', 'b', 'c']);
    expect(splitScope('')).toEqual([]);
    expect(splitScope(undefined)).toEqual([]);
  });
});

describe('RFC 8707 §2 / MCP §Canonical Server URI: canonicalResource', () => {
  it.each([
    ['https://MCP.example.com:8443/a/', 'https://mcp.example.com:8443/a'],
    ['https://mcp.example.com:443/', 'https://mcp.example.com'],
    ['HTTP://LOCALHOST:3000/mcp', 'http://localhost:3000/mcp'],
    ['http://localhost:3000/a/../mcp', 'http://localhost:3000/mcp'],
    ['https://a.example/mcp?x=1', 'https://a.example/mcp?x=1'],
  ])('%s → %s', (value, canonical) => expect(canonicalResource(value)).toBe(canonical));
  it.each(['https://a.example/mcp#f', 'https://user@a.example/mcp', 'ftp://a.example/x', 'a.example/mcp', ''])(
    '%j identifies no resource',
    (value) => {
      expect(canonicalResource(value)).toBeUndefined();
    },
  );
  it('the path stays case-sensitive', () =>
    expect(canonicalResource('https://a.example/MCP')).not.toBe(canonicalResource('https://a.example/mcp')));
});
