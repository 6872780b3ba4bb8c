/** The contract of the key-value store: expiry, counters (fixed window), give-back, list. */
import { describe, expect, it } from 'vitest';
import type { Opened } from '../contract.js';

export function kvContract(opened: Opened): void {
  describe('kv', () => {
    it('set/get/delete with TTL', async () => {
      await opened.store.kv.set('cimd', 'https://client.example/doc', { client_name: 'x' }, 30);
      expect(await opened.store.kv.get('cimd', 'https://client.example/doc')).toEqual({ client_name: 'x' });
      expect(await opened.store.kv.get('other-ns', 'https://client.example/doc')).toBeUndefined();
      opened.clock.advance(30);
      expect(await opened.store.kv.get('cimd', 'https://client.example/doc')).toBeUndefined();
      await opened.store.kv.set('cimd', 'k', 'v', 30);
      await opened.store.kv.set('cimd', 'k', 'v2', 30);
      expect(await opened.store.kv.get('cimd', 'k')).toBe('v2');
      await opened.store.kv.delete('cimd', 'k');
      expect(await opened.store.kv.get('cimd', 'k')).toBeUndefined();
    });

    it('list gives the live entries of one namespace with their expiry, and none of another', async () => {
      await opened.store.kv.set('revoked', 'g1', { at: 1 }, 30);
      await opened.store.kv.set('revoked', 'g2', { at: 2 }, 90);
      await opened.store.kv.set('revoked-not', 'g3', { at: 3 }, 90);
      await opened.store.kv.set('other', 'revoked', 1, 90);
      const now = opened.clock.now();
      const listed = (await opened.store.kv.list('revoked')).sort((a, b) => a.key.localeCompare(b.key));
      expect(listed).toEqual([
        { key: 'g1', value: { at: 1 }, expiresAt: now + 30_000 },
        { key: 'g2', value: { at: 2 }, expiresAt: now + 90_000 },
      ]);
      opened.clock.advance(30);
      expect((await opened.store.kv.list('revoked')).map((e) => e.key)).toEqual(['g2']);
      expect(await opened.store.kv.list('empty')).toEqual([]);
    });

    it('increment counts from `by` and expires ttl after creation (not extended by later increments)', async () => {
      expect(await opened.store.kv.increment('rate', 'ip', 1, 60)).toBe(1);
      opened.clock.advance(30);
      expect(await opened.store.kv.increment('rate', 'ip', 2, 60)).toBe(3);
      expect(await opened.store.kv.get('rate', 'ip')).toBe(3);
      opened.clock.advance(30);
      expect(await opened.store.kv.get('rate', 'ip')).toBeUndefined();
      expect(await opened.store.kv.increment('rate', 'ip', 1, 60), 'a new window starts').toBe(1);
    });

    it('refuses bad input the same way everywhere (invalid_input)', async () => {
      await expect(opened.store.kv.set('ns', 'k', 1, 0)).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(opened.store.kv.set('ns', 'k', 1, Number.NaN)).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(opened.store.kv.set('ns', 'k', undefined, 10)).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(opened.store.kv.set('', 'k', 1, 10)).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(opened.store.kv.increment('ns', 'k', Number.POSITIVE_INFINITY, 10)).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(opened.store.kv.increment('ns', 'k', 1, -5)).rejects.toMatchObject({ code: 'invalid_input' });
      expect(await opened.store.kv.get('ns', 'k')).toBeUndefined();
    });

    it('a non-numeric value under a counter key restarts the counter instead of failing', async () => {
      await opened.store.kv.set('ns', 'k', { not: 'a number' }, 60);
      expect(await opened.store.kv.increment('ns', 'k', 2, 60)).toBe(2);
      expect(await opened.store.kv.increment('ns', 'k', 3, 60)).toBe(5);
    });

    it('increment is atomic under concurrency: 40 parallel increments give 1..40', async () => {
      const results = await Promise.all(Array.from({ length: 40 }, () => opened.store.kv.increment('lockout', 'alice', 1, 300)));
      expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect(await opened.store.kv.get('lockout', 'alice')).toBe(40);
    });

    it('decrement takes back from a live counter, never below 0, keeping its window', async () => {
      expect(await opened.store.kv.increment('rate', 'ip', 3, 60)).toBe(3);
      opened.clock.advance(30);
      expect(await opened.store.kv.decrement('rate', 'ip', 1)).toBe(2);
      expect(await opened.store.kv.decrement('rate', 'ip', 5)).toBe(0);
      expect(await opened.store.kv.increment('rate', 'ip', 1, 60)).toBe(1);
      opened.clock.advance(30);
      expect(await opened.store.kv.get('rate', 'ip'), 'the window still ends 60 s after creation').toBeUndefined();
    });

    it('decrement never creates a counter nor restarts an expired window (undefined instead)', async () => {
      expect(await opened.store.kv.decrement('rate', 'absent', 1)).toBeUndefined();
      expect(await opened.store.kv.get('rate', 'absent')).toBeUndefined();
      await opened.store.kv.increment('rate', 'old', 2, 10);
      opened.clock.advance(10);
      expect(await opened.store.kv.decrement('rate', 'old', 1)).toBeUndefined();
      expect(await opened.store.kv.increment('rate', 'old', 1, 10), 'a fresh window starts at `by`, not below it').toBe(1);
      await opened.store.kv.set('ns', 'text', { not: 'a number' }, 60);
      expect(await opened.store.kv.decrement('ns', 'text', 1)).toBeUndefined();
      expect(await opened.store.kv.get('ns', 'text')).toEqual({ not: 'a number' });
      await expect(opened.store.kv.decrement('ns', 'k', -1)).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(opened.store.kv.decrement('ns', 'k', Number.NaN)).rejects.toMatchObject({ code: 'invalid_input' });
    });

    it('increment and decrement interleaved under concurrency lose no update', async () => {
      await opened.store.kv.increment('lockout', 'bob', 20, 300);
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2 ? opened.store.kv.increment('lockout', 'bob', 1, 300) : opened.store.kv.decrement('lockout', 'bob', 1),
        ),
      );
      expect(await opened.store.kv.get('lockout', 'bob')).toBe(20);
    });
  });
}
