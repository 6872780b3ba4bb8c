import { describe, expect, it } from 'vitest';
import { checkScopes, missingScopes, requiredScopes, ResourceServerError, type ScopePolicy } from '../src/core.js';
import { rpc } from './helpers/harness.js';

const policy: ScopePolicy = {
  default: ['notes:read'],
  methods: { 'resources/subscribe': ['notes:watch'] },
  tools: { add_note: ['notes:write'], purge: ['notes:write', 'notes:admin'] },
};

describe('requiredScopes()', () => {
  it('default for any request, plus per-method and per-tool scopes', () => {
    expect(requiredScopes(undefined, policy)).toEqual(['notes:read']);
    expect(requiredScopes(rpc('tools/list'), policy)).toEqual(['notes:read']);
    expect(requiredScopes(rpc('resources/subscribe'), policy)).toEqual(['notes:read', 'notes:watch']);
    expect(requiredScopes(rpc('tools/call', { name: 'add_note' }), policy)).toEqual(['notes:read', 'notes:write']);
    expect(requiredScopes(rpc('tools/call', { name: 'unknown' }), policy)).toEqual(['notes:read']);
  });

  it('a JSON-RPC batch needs the union of all its messages', () => {
    const batch = [rpc('tools/call', { name: 'add_note' }, 1), rpc('resources/subscribe', {}, 2), rpc('tools/call', { name: 'purge' }, 3)];
    expect(requiredScopes(batch, policy)).toEqual(['notes:read', 'notes:write', 'notes:watch', 'notes:admin']);
    expect(requiredScopes([], policy)).toEqual(['notes:read']);
  });

  it('ignores prototype keys and malformed messages', () => {
    expect(requiredScopes(rpc('tools/call', { name: '__proto__' }), policy)).toEqual(['notes:read']);
    expect(requiredScopes(rpc('constructor'), policy)).toEqual(['notes:read']);
    expect(requiredScopes([null, 1, 'x', { method: 5 }, { method: 'tools/call', params: 'x' }], policy)).toEqual(['notes:read']);
  });
});

describe('checkScopes()', () => {
  it('MCP §Step-Up: servers MUST honour scope hierarchies (a broader scope implies narrower ones)', () => {
    const hierarchy = { 'notes:admin': ['notes:write'], 'notes:write': ['notes:read'] };
    expect(missingScopes(['notes:admin'], ['notes:read', 'notes:write'], hierarchy)).toEqual([]);
    expect(missingScopes(['notes:read'], ['notes:read', 'notes:write'], hierarchy)).toEqual(['notes:write']);
    expect(missingScopes(['notes:write'], ['notes:read'], {})).toEqual(['notes:read']);
  });

  it('MCP §Scope Challenge Handling: one challenge lists every scope the operation needs', () => {
    try {
      checkScopes(['notes:read'], ['notes:read', 'notes:write', 'notes:admin']);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ResourceServerError);
      expect((err as ResourceServerError).scope).toEqual(['notes:read', 'notes:write', 'notes:admin']);
      expect((err as ResourceServerError).status).toBe(403);
    }
  });

  it("'required-and-granted' adds known granted scopes (never offline_access, never unknown ones)", () => {
    try {
      checkScopes(['notes:watch', 'offline_access', 'openid'], ['notes:read', 'notes:write'], {
        strategy: 'required-and-granted',
        knownScopes: new Set(['notes:read', 'notes:write', 'notes:watch', 'offline_access']),
      });
      expect.unreachable();
    } catch (err) {
      expect((err as ResourceServerError).scope).toEqual(['notes:read', 'notes:write', 'notes:watch']);
    }
  });
});
