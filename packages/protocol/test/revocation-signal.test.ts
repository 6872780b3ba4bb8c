import { describe, expect, it } from 'vitest';
import * as signal from '../src/revocation-signal.js';

describe('revocation signal names (AS publishes, RS reads: one definition)', () => {
  it('keys and channel share the prefix; every key starts with the SCAN prefix', () => {
    expect(signal.revocationChannel()).toBe(`${signal.DEFAULT_REVOCATION_PREFIX}revoked-grants`);
    expect(signal.revokedGrantKey('abc', 't1:')).toBe('t1:revoked-grant:abc');
    expect(signal.revokedGrantKey('abc', 't1:').startsWith(signal.revokedGrantKeyPrefix('t1:'))).toBe(true);
  });
  it('grant ids are bounded base64url; anything else is refused', () => {
    expect(signal.isGrantId('Yx2_-abc')).toBe(true);
    for (const bad of ['', 'a b', 'a*', 'x'.repeat(129), 42, undefined, 'ü']) expect(signal.isGrantId(bad)).toBe(false);
  });
  it('the key value names when the grant may be forgotten (epoch seconds); an older "1" or junk names nothing', () => {
    expect(signal.revokedGrantUntil(signal.revokedGrantValue(1_800_000_000.2))).toBe(1_800_000_001);
    for (const other of ['1', '', 'x1800000000', '1800000000 ', '-1800000000', '0180000000', 1_800_000_000, undefined]) {
      expect(signal.revokedGrantUntil(other)).toBeUndefined();
    }
  });
});
