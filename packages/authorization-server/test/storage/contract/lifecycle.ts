/** The contract of a store's life: clean-up, ping, close, and (durable targets) what survives a reopen. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/storage/index.js';
import type { ContractTarget, Opened, TestClock } from '../contract.js';

export function lifecycleContract(target: ContractTarget, opened: Opened): void {
  let store: Store;
  let clock: TestClock;
  beforeEach(() => {
    ({ store, clock } = opened);
  });

  describe('cleanup and lifecycle', () => {
    it('cleanup deletes expired rows only and returns how many', async () => {
      await store.adapter('AccessToken').upsert('old', { jti: 'old', grantId: 'g' }, 10);
      await store.adapter('Session').upsert('old', { jti: 'old', uid: 'u' }, 10);
      await store.adapter('AccessToken').upsert('new', { jti: 'new', grantId: 'g' }, 1000);
      await store.adapter('Client').upsert('c', { client_id: 'c' });
      await store.kv.set('ns', 'old', 1, 10);
      await store.kv.set('ns', 'new', 1, 1000);
      clock.advance(11);
      expect(await store.cleanup()).toBe(3);
      expect(await store.cleanup()).toBe(0);
      expect(await store.adapter('AccessToken').find('new')).toBeDefined();
      expect(await store.adapter('Client').find('c')).toBeDefined();
      expect(await store.kv.get('ns', 'new')).toBe(1);
    });

    it('ping resolves while open; after close every operation rejects with a closed StorageError', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
      await expect(store.ping()).rejects.toMatchObject({ code: 'closed' });
      await expect(store.adapter('Client').find('x')).rejects.toMatchObject({ code: 'closed' });
      await expect(store.kv.get('a', 'b')).rejects.toMatchObject({ code: 'closed' });
      await expect(store.accounts.list()).rejects.toMatchObject({ code: 'closed' });
      await expect(store.connections.list('a1')).rejects.toMatchObject({ code: 'closed' });
      await expect(store.keys.signingKeys()).rejects.toMatchObject({ code: 'closed' });
      await expect(store.cleanup()).rejects.toMatchObject({ code: 'closed' });
    });

    it('the periodic clean-up runs while open and stops at close', async () => {
      await store.close();
      const runs: number[] = [];
      let firstRemoval!: () => void;
      const removed = new Promise<void>((resolve) => (firstRemoval = resolve));
      store = opened.store = await target.open({
        clock: clock.now,
        cleanupIntervalSeconds: 0.05,
        onCleanup: (n) => {
          runs.push(n);
          if (n > 0) firstRemoval();
        },
      });
      await store.kv.set('ns', 'k', 1, 1);
      await store.adapter('AccessToken').upsert('t', { jti: 't' }, 1);
      clock.advance(2);
      await removed;
      expect(runs.reduce((a, b) => a + b, 0)).toBe(2);
      expect(await store.cleanup(), 'nothing left for a manual run').toBe(0);
      await store.close();
      const after = runs.length;
      await new Promise((r) => setTimeout(r, 200));
      expect(runs.length, 'no run after close').toBe(after);
    });
  });

  if (target.durable) {
    describe('persistence', () => {
      it('everything written survives close() and a fresh openStore', async () => {
        await store.adapter('Client').upsert('c', { client_id: 'c', redirect_uris: ['http://127.0.0.1/cb'] });
        await store.adapter('RefreshToken').upsert('rt', { jti: 'rt', grantId: 'g', kind: 'RefreshToken' }, 3600);
        await store.adapter('Session').upsert('s', { jti: 's', uid: 'u' }, 3600);
        await store.accounts.create({ id: 'a1', username: 'Alice', passwordHash: 'h', disabled: false, upstreamIdentities: ['i s'] });
        const keys = await store.keys.signingKeys();
        const cookies = await store.keys.rotateCookieKeys();
        await store.kv.set('ns', 'k', { v: 1 }, 3600);
        await store.close();

        store = opened.store = await target.open({ clock: clock.now, cleanupIntervalSeconds: 0 });
        expect(await store.adapter('Client').find('c')).toEqual({ client_id: 'c', redirect_uris: ['http://127.0.0.1/cb'] });
        expect((await store.adapter('RefreshToken').find('rt'))?.grantId).toBe('g');
        expect((await store.adapter('Session').findByUid('u'))?.jti).toBe('s');
        expect((await store.accounts.findByUsername('alice'))?.id).toBe('a1');
        expect((await store.accounts.findByUpstreamIdentity('i', 's'))?.id).toBe('a1');
        expect((await store.accounts.findById('a1'))?.source).toBe('operator');
        expect(await store.keys.signingKeys()).toEqual(keys);
        expect(await store.keys.cookieKeys()).toEqual(cookies);
        expect(await store.kv.get('ns', 'k')).toEqual({ v: 1 });
      });

      it('two stores opened at once on the same storage agree on keys', async () => {
        await store.close();
        await target.reset();
        const [a, b] = await Promise.all([
          target.open({ clock: clock.now, cleanupIntervalSeconds: 0 }),
          target.open({ clock: clock.now, cleanupIntervalSeconds: 0 }),
        ]);
        try {
          const [ka, kb] = await Promise.all([a.keys.signingKeys(), b.keys.signingKeys()]);
          expect(ka.map((k) => k.jwk.kid)).toEqual(kb.map((k) => k.jwk.kid));
          const [ca, cb] = await Promise.all([a.keys.cookieKeys(), b.keys.cookieKeys()]);
          expect(ca).toEqual(cb);
          const counts = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).kv.increment('rate', 'shared', 1, 60)));
          expect([...counts].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
          await a.adapter('AuthorizationCode').upsert('code', { jti: 'code', grantId: 'g' }, 60);
          await b.adapter('AuthorizationCode').consume('code');
          expect((await a.adapter('AuthorizationCode').find('code'))?.consumed).toBe(clock.seconds);
        } finally {
          await Promise.all([a.close(), b.close()]);
        }
        store = opened.store = await target.open({ clock: clock.now, cleanupIntervalSeconds: 0 });
      });
    });
  }
}
