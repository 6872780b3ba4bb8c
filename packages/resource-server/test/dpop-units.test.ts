import { describe, expect, it } from 'vitest';
import { DpopNonces, MemoryDpopReplayStore, normalizeHtu, replayKey } from '../src/index.js';

describe('DPoP building blocks', () => {
  it('RFC 9449 §11.1: the replay store refuses a seen key until it expires', () => {
    let clock = 1_000;
    const store = new MemoryDpopReplayStore(10, () => clock);
    expect(store.add('a', 2_000)).toBe(true);
    expect(store.add('a', 2_000)).toBe(false);
    clock = 2_000;
    expect(store.add('a', 3_000)).toBe(true);
  });

  it('RFC 9449 §11.1: the replay store is bounded and sweeps expired entries', () => {
    let clock = 0;
    const store = new MemoryDpopReplayStore(3, () => clock);
    for (const k of ['a', 'b', 'c', 'd']) store.add(k, 100);
    expect(store.size).toBe(3);
    clock = 100;
    store.add('e', 200);
    expect(store.size).toBe(1);
  });

  it('replay keys depend on both the key thumbprint and the jti', () => {
    expect(replayKey('k1', 'j')).not.toBe(replayKey('k2', 'j'));
    expect(replayKey('k1', 'j')).toBe(replayKey('k1', 'j'));
  });

  it('RFC 9449 §4.3 (9): htu normalisation drops query, fragment, default port, dot segments; decodes unreserved escapes', () => {
    expect(normalizeHtu('HTTPS://Example.COM:443/a/../mcp?x#y')).toBe('https://example.com/mcp');
    expect(normalizeHtu('http://example.com/%7euser/%2f')).toBe('http://example.com/~user/%2F');
    expect(normalizeHtu('javascript:alert(1)')).toBeUndefined();
    expect(normalizeHtu('/relative')).toBeUndefined();
  });

  it('RFC 9449 §9: nonces are periodic HMACs: fresh, then stale, then invalid', () => {
    let clock = 60_000 * 1000;
    const nonces = new DpopNonces(new Uint8Array(32), 120, () => clock);
    const n = nonces.current();
    expect(nonces.check(n)).toBe('fresh');
    clock += 60_000;
    expect(nonces.check(n)).toBe('stale');
    clock += 120_000;
    expect(nonces.check(n)).toBe('invalid');
    expect(nonces.check('x')).toBe('invalid');
  });
});
