/** The pure key-planning rules behind every backend's KeyStore. */
import { describe, expect, it } from 'vitest';
import type { JWK } from 'jose';
import { isLive, orderSigningKeys, planInitialKeys, planRotation } from '../../src/storage/keys.js';
import type { StoredSigningKey } from '../../src/storage/types.js';

const jwk = (kid: string): JWK => ({ kty: 'EC', kid });
const key = (kid: string, status: StoredSigningKey['status'], extra: Partial<StoredSigningKey> = {}): StoredSigningKey => ({
  jwk: jwk(kid),
  status,
  createdAt: 100,
  ...extra,
});

describe('signing key plans', () => {
  it('initial: nothing to do when a current and a next exist', () => {
    expect(planInitialKeys([key('c', 'current'), key('n', 'next')], [jwk('x')], 1000)).toBeUndefined();
  });

  it('initial: a store holding only a next key gets a current one, keeping the published next', () => {
    const plan = planInitialKeys([key('n', 'next')], [jwk('f1'), jwk('f2')], 1000)!;
    expect(plan.map((k) => [k.jwk.kid, k.status])).toEqual([
      ['n', 'next'],
      ['f1', 'current'],
    ]);
  });

  it('initial: expired retired keys are dropped while filling the gaps', () => {
    const plan = planInitialKeys([key('old', 'retired', { retireAfter: 999 })], [jwk('f1'), jwk('f2')], 1000)!;
    expect(plan.map((k) => k.jwk.kid)).toEqual(['f1', 'f2']);
  });

  it('rotation without a published next (e.g. data from an older build) promotes a fresh key and publishes another', () => {
    const plan = planRotation([key('c', 'current')], [jwk('f1'), jwk('f2')], 1000, 60);
    expect(orderSigningKeys(plan).map((k) => [k.jwk.kid, k.status, k.retireAfter])).toEqual([
      ['f1', 'current', undefined],
      ['f2', 'next', undefined],
      ['c', 'retired', 1060],
    ]);
  });

  it('rotation drops stray extra next keys and expired retired keys, keeps live retired ones', () => {
    const rows = [
      key('c', 'current'),
      key('n1', 'next', { createdAt: 200 }),
      key('n2', 'next', { createdAt: 300 }),
      key('r-live', 'retired', { retireAfter: 5000 }),
      key('r-dead', 'retired', { retireAfter: 1000 }),
    ];
    const plan = orderSigningKeys(planRotation(rows, [jwk('f1'), jwk('f2')], 1000, 60));
    expect(plan.map((k) => [k.jwk.kid, k.status])).toEqual([
      ['n1', 'current'],
      ['f1', 'next'],
      ['r-live', 'retired'],
      ['c', 'retired'],
    ]);
  });

  it('a retired key is live strictly before retireAfter', () => {
    expect(isLive(key('r', 'retired', { retireAfter: 10 }), 9)).toBe(true);
    expect(isLive(key('r', 'retired', { retireAfter: 10 }), 10)).toBe(false);
    expect(isLive(key('c', 'current'), 1e12)).toBe(true);
  });
});
