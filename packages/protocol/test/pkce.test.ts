import { describe, expect, it } from 'vitest';
import { pkceChallengeS256 } from '../src/pkce.js';

describe('RFC 7636 §4.2: pkceChallengeS256', () => {
  it('RFC 7636 Appendix B: the S256 challenge of the example verifier', () => {
    expect(pkceChallengeS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });
});
