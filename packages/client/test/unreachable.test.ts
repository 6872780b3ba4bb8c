import { describe, expect, it } from 'vitest';
import { networkFailureReason } from '../src/unreachable.js';

// What Node's fetch throws when no HTTP answer came: TypeError('fetch failed') with the socket error in `cause`.
const failed = (cause: unknown) => new TypeError('fetch failed', { cause });

describe('networkFailureReason: "did not answer" told apart from an answer', () => {
  it('names the usual socket and DNS failures', () => {
    expect(networkFailureReason(failed(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })))).toBe(
      'connection refused',
    );
    expect(networkFailureReason(failed(Object.assign(new Error('x'), { code: 'UND_ERR_CONNECT_TIMEOUT' })))).toBe('connection timed out');
    expect(networkFailureReason(failed(Object.assign(new Error('x'), { code: 'ENOTFOUND' })))).toBe('host name not found');
    expect(networkFailureReason(failed(Object.assign(new Error('x'), { code: 'CERT_HAS_EXPIRED' })))).toBe('TLS failed: CERT_HAS_EXPIRED');
    expect(networkFailureReason(new DOMException('The operation timed out.', 'TimeoutError'))).toBe('timed out');
    expect(networkFailureReason(failed(new Error('other')))).toBe('network error');
  });
  it('is undefined for errors that are not network failures', () => {
    expect(networkFailureReason(new Error('Tool x not found'))).toBeUndefined();
    expect(networkFailureReason(new SyntaxError('Unexpected token'))).toBeUndefined();
    expect(networkFailureReason(undefined)).toBeUndefined();
  });
});
