import { describe, expect, it } from 'vitest';
import { expectOAuthError } from '../src/index.js';

describe('expectOAuthError (RFC 6749 §5.2 error responses)', () => {
  it('passes for the named status and error code', () => {
    expect(() =>
      expectOAuthError({ status: 400, body: { error: 'invalid_grant', error_description: 'x' } }, 'invalid_grant', 400),
    ).not.toThrow();
  });

  it.each([
    ['another status', { status: 401, body: { error: 'invalid_grant' } }],
    ['another error code', { status: 400, body: { error: 'invalid_request' } }],
    ['no error member', { status: 400, body: {} }],
    ['no body', { status: 400, body: undefined }],
  ])('fails for %s', (_, res) => {
    expect(() => expectOAuthError(res, 'invalid_grant', 400)).toThrow(/expected 400 invalid_grant/);
  });
});
