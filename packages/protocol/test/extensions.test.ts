import { describe, expect, it } from 'vitest';
import {
  AUTH_EXTENSIONS,
  ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION,
  isAuthExtension,
  OAUTH_CLIENT_CREDENTIALS_EXTENSION,
} from '../src/extensions.js';

// spec/extensions/auth-overview.mdx: the two official authorization extensions and their identifiers
describe('authorization extension identifiers (spec/extensions)', () => {
  it('names the two official extensions with their spec identifiers', () => {
    expect(OAUTH_CLIENT_CREDENTIALS_EXTENSION).toBe('io.modelcontextprotocol/oauth-client-credentials');
    expect(ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION).toBe('io.modelcontextprotocol/enterprise-managed-authorization');
    expect(AUTH_EXTENSIONS).toHaveLength(2);
  });

  it.each([
    ['io.modelcontextprotocol/oauth-client-credentials', true],
    ['io.modelcontextprotocol/enterprise-managed-authorization', true],
    ['io.modelcontextprotocol/OAUTH-client-credentials', false],
    ['io.modelcontextprotocol/elicitation', false],
    [undefined, false],
    [42, false],
  ])('isAuthExtension(%j) is %s', (value, expected) => {
    expect(isAuthExtension(value)).toBe(expected);
  });
});
