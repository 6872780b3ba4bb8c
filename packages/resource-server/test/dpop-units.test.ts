import { describe, expect, it } from 'vitest';
import type { CryptoKey } from 'jose';
import { DpopNonces, MemoryDpopReplayStore } from '../src/core.js';
import { normalizeHtu } from '../src/dpop.js';
import { replayKey } from '../src/dpop-replay.js';
import { ProofKeyMemo } from '../src/proof-keys.js';

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

  it('RFC 9449 §4.3 (6): remembered proof keys are named by alg and the jwk as sent, bounded, least recently used out first', () => {
    const jwk = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' };
    expect(ProofKeyMemo.nameOf('ES256', jwk)).not.toBe(ProofKeyMemo.nameOf('ES384', jwk));
    // member for member: another spelling of the same key is another name
    expect(ProofKeyMemo.nameOf('ES256', jwk)).not.toBe(ProofKeyMemo.nameOf('ES256', { ...jwk, use: 'sig' }));
    expect(ProofKeyMemo.nameOf('ES256', jwk)).not.toBe(ProofKeyMemo.nameOf('ES256', { y: 'y', x: 'x', crv: 'P-256', kty: 'EC' }));

    const memo = new ProofKeyMemo();
    const key = {} as CryptoKey;
    for (let i = 0; i < 256; i++) memo.remember(`k${i}`, { key });
    expect(memo.get('k0')).toBeDefined(); // used again: now the most recent
    memo.remember('k256', { key });
    expect(memo.size).toBe(256);
    expect(memo.get('k0')).toBeDefined();
    expect(memo.get('k1')).toBeUndefined();
    expect(memo.get('k256')).toBeDefined();
  });
});
