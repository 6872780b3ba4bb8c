/** The contract of a store's life: clean-up, ping, close, and (durable targets) what survives a reopen. */
import { describe, expect, it } from 'vitest';
import type { ContractTarget, Opened } from '../contract.js';

export function lifecycleContract(target: ContractTarget, opened: Opened): void {
  describe('cleanup and lifecycle', () => {
    it('cleanup deletes expired rows only and returns how many', async () => {
      await opened.store.adapter('AccessToken').upsert('old', { jti: 'old', grantId: 'g' }, 10);
      await opened.store.adapter('Session').upsert('old', { jti: 'old', uid: 'u' }, 10);
      await opened.store.adapter('AccessToken').upsert('new', { jti: 'new', grantId: 'g' }, 1000);
      await opened.store.adapter('Client').upsert('c', { client_id: 'c' });
      await opened.store.kv.set('ns', 'old', 1, 10);
      await opened.store.kv.set('ns', 'new', 1, 1000);
      opened.clock.advance(11);
      expect(await opened.store.cleanup()).toBe(3);
      expect(await opened.store.cleanup()).toBe(0);
      expect(await opened.store.adapter('AccessToken').find('new')).toBeDefined();
      expect(await opened.store.adapter('Client').find('c')).toBeDefined();
      expect(await opened.store.kv.get('ns', 'new')).toBe(1);
    });

    it('ping resolves while open; after close every operation rejects with a closed StorageError', async () => {
      await expect(opened.store.ping()).resolves.toBeUndefined();
      await opened.store.close();
      await expect(opened.store.close()).resolves.toBeUndefined();
      await expect(opened.store.ping()).rejects.toMatchObject({ code: 'closed' });
      await expect(opened.store.adapter('Client').find('x')).rejects.toMatchObject({ code: 'closed' });
      await expect(opened.store.kv.get('a', 'b')).rejects.toMatchObject({ code: 'closed' });
      await expect(opened.store.accounts.list()).rejects.toMatchObject({ code: 'closed' });
      await expect(opened.store.connections.list('a1')).rejects.toMatchObject({ code: 'closed' });
      await expect(opened.store.keys.signingKeys()).rejects.toMatchObject({ code: 'closed' });
      await expect(opened.store.cleanup()).rejects.toMatchObject({ code: 'closed' });
    });

    it('the periodic clean-up runs while open and stops at close', async () => {
      await opened.store.close();
      const runs: number[] = [];
      let firstRemoval!: () => void;
      const removed = new Promise<void>((resolve) => (firstRemoval = resolve));
      opened.store = await target.open({
        clock: opened.clock.now,
        cleanupIntervalSeconds: 0.05,
        onCleanup: (n) => {
          runs.push(n);
          if (n > 0) firstRemoval();
        },
      });
      await opened.store.kv.set('ns', 'k', 1, 1);
      await opened.store.adapter('AccessToken').upsert('t', { jti: 't' }, 1);
      opened.clock.advance(2);
      await removed;
      expect(runs.reduce((a, b) => a + b, 0)).toBe(2);
      expect(await opened.store.cleanup(), 'nothing left for a manual run').toBe(0);
      await opened.store.close();
      const after = runs.length;
      await new Promise((r) => setTimeout(r, 200));
      expect(runs.length, 'no run after close').toBe(after);
    });
  });

  if (target.durable) {
    describe('persistence', () => {
      it('everything written survives close() and a fresh openStore', async () => {
        await opened.store.adapter('Client').upsert('c', { client_id: 'c', redirect_uris: ['http://127.0.0.1/cb'] });
        await opened.store.adapter('RefreshToken').upsert('rt', { jti: 'rt', grantId: 'g', kind: 'RefreshToken' }, 3600);
        await opened.store.adapter('Session').upsert('s', { jti: 's', uid: 'u' }, 3600);
        await opened.store.accounts.create({
          id: 'a1',
          username: 'Alice',
          passwordHash: 'h',
          disabled: false,
          upstreamIdentities: ['i s'],
        });
        const keys = await opened.store.keys.signingKeys();
        const cookies = await opened.store.keys.rotateCookieKeys();
        await opened.store.kv.set('ns', 'k', { v: 1 }, 3600);
        await opened.store.close();

        opened.store = await target.open({ clock: opened.clock.now, cleanupIntervalSeconds: 0 });
        expect(await opened.store.adapter('Client').find('c')).toEqual({ client_id: 'c', redirect_uris: ['http://127.0.0.1/cb'] });
        expect((await opened.store.adapter('RefreshToken').find('rt'))?.grantId).toBe('g');
        expect((await opened.store.adapter('Session').findByUid('u'))?.jti).toBe('s');
        expect((await opened.store.accounts.findByUsername('alice'))?.id).toBe('a1');
        expect((await opened.store.accounts.findByUpstreamIdentity('i', 's'))?.id).toBe('a1');
        expect((await opened.store.accounts.findById('a1'))?.source).toBe('operator');
        expect(await opened.store.keys.signingKeys()).toEqual(keys);
        expect(await opened.store.keys.cookieKeys()).toEqual(cookies);
        expect(await opened.store.kv.get('ns', 'k')).toEqual({ v: 1 });
      });

      it('two stores opened at once on the same storage agree on keys', async () => {
        await opened.store.close();
        await target.reset();
        const [a, b] = await Promise.all([
          target.open({ clock: opened.clock.now, cleanupIntervalSeconds: 0 }),
          target.open({ clock: opened.clock.now, cleanupIntervalSeconds: 0 }),
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
          expect((await a.adapter('AuthorizationCode').find('code'))?.consumed).toBe(opened.clock.seconds);
        } finally {
          await Promise.all([a.close(), b.close()]);
        }
        opened.store = await target.open({ clock: opened.clock.now, cleanupIntervalSeconds: 0 });
      });
    });
  }
}
