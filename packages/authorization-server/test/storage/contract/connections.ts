/**
 * The contract of the connection store (the token vault's rows): one connection per (account,
 * provider), replaced in place (createdAt kept, version grown), a replacement conditional on the
 * version it read, listings per account, deletes per connection and per account, NUL keys.
 */
import { describe, expect, it } from 'vitest';
import type { ConnectionInput } from '../../../src/storage/index.js';
import type { Opened } from '../contract.js';

const input = (accountId: string, provider: string, extra: Partial<ConnectionInput> = {}): ConnectionInput => ({
  accountId,
  provider,
  keyId: 'k1',
  sealed: `sealed-${accountId}-${provider}`,
  scopes: ['files.read', 'files.write'],
  ...extra,
});

export function connectionsContract(opened: Opened): void {
  describe('third-party connections', () => {
    it('put then get: every member back as written, timestamps and version from the store', async () => {
      const written = await opened.store.connections.put(
        input('a1', 'drive', { providerSubject: 'u-77', expiresAt: opened.clock.seconds + 3600 }),
      );
      expect(written).toEqual({
        accountId: 'a1',
        provider: 'drive',
        keyId: 'k1',
        sealed: 'sealed-a1-drive',
        scopes: ['files.read', 'files.write'],
        providerSubject: 'u-77',
        expiresAt: opened.clock.seconds + 3600,
        createdAt: opened.clock.seconds,
        updatedAt: opened.clock.seconds,
        version: 1,
      });
      expect(await opened.store.connections.get('a1', 'drive')).toEqual(written);
      expect(await opened.store.connections.get('a1', 'calendar')).toBeUndefined();
      expect(await opened.store.connections.get('a2', 'drive')).toBeUndefined();
    });

    it('optional members stay absent (no null, no undefined key); an empty scope list reads back empty', async () => {
      const written = await opened.store.connections.put(input('a1', 'drive', { scopes: [] }));
      const read = (await opened.store.connections.get('a1', 'drive'))!;
      expect(read).toEqual(written);
      expect('providerSubject' in read || 'expiresAt' in read).toBe(false);
      expect(read.scopes).toEqual([]);
    });

    it('a second put replaces the pair: createdAt kept, updatedAt and version moved', async () => {
      await opened.store.connections.put(input('a1', 'drive'));
      opened.clock.advance(30);
      const second = await opened.store.connections.put(input('a1', 'drive', { sealed: 'new', keyId: 'k2', scopes: ['files.read'] }));
      expect(second).toMatchObject({
        sealed: 'new',
        keyId: 'k2',
        scopes: ['files.read'],
        createdAt: opened.clock.seconds - 30,
        updatedAt: opened.clock.seconds,
        version: 2,
      });
      expect(await opened.store.connections.get('a1', 'drive')).toEqual(second);
    });

    it('replace writes only over the version it read: a raced refresh or a disconnect in between wins', async () => {
      const first = await opened.store.connections.put(input('a1', 'drive'));
      const replaced = await opened.store.connections.replace(input('a1', 'drive', { sealed: 'refreshed' }), first.version);
      expect(replaced).toMatchObject({ sealed: 'refreshed', version: first.version + 1 });
      // a second refresh that read the old version writes nothing
      expect(await opened.store.connections.replace(input('a1', 'drive', { sealed: 'late' }), first.version)).toBeUndefined();
      expect((await opened.store.connections.get('a1', 'drive'))?.sealed).toBe('refreshed');
      // after a disconnect nothing is revived
      await opened.store.connections.delete('a1', 'drive');
      expect(await opened.store.connections.replace(input('a1', 'drive', { sealed: 'revived' }), replaced!.version)).toBeUndefined();
      expect(await opened.store.connections.get('a1', 'drive')).toBeUndefined();
    });

    it('list gives one account’s connections by provider name; delete and deleteAccount say what they removed', async () => {
      await opened.store.connections.put(input('a1', 'drive'));
      await opened.store.connections.put(input('a1', 'calendar'));
      await opened.store.connections.put(input('a2', 'drive'));
      expect((await opened.store.connections.list('a1')).map((c) => c.provider)).toEqual(['calendar', 'drive']);
      expect(await opened.store.connections.list('nobody')).toEqual([]);
      expect(await opened.store.connections.delete('a1', 'drive')).toBe(true);
      expect(await opened.store.connections.delete('a1', 'drive')).toBe(false);
      await opened.store.connections.put(input('a1', 'mail'));
      expect(await opened.store.connections.deleteAccount('a1')).toBe(2);
      expect(await opened.store.connections.list('a1')).toEqual([]);
      expect((await opened.store.connections.list('a2')).map((c) => c.provider)).toEqual(['drive']);
    });

    it('refuses input no caller writes (invalid_input): empty keys, scopes that are not tokens, a fractional expiry', async () => {
      for (const bad of [
        input('', 'drive'),
        input('a1', ''),
        input('a1', 'drive', { sealed: '' }),
        input('a1', 'drive', { scopes: ['two words'] }),
        input('a1', 'drive', { expiresAt: 1.5 }),
      ]) {
        await expect(opened.store.connections.put(bad)).rejects.toMatchObject({ name: 'StorageError', code: 'invalid_input' });
      }
      expect(await opened.store.connections.list('a1')).toEqual([]);
    });

    it('keys with U+0000: lookups find nothing, deletes remove nothing, writes are invalid_input', async () => {
      await opened.store.connections.put(input('a1', 'drive'));
      expect(await opened.store.connections.get('a1\u0000', 'drive')).toBeUndefined();
      expect(await opened.store.connections.get('a1', 'drive\u0000')).toBeUndefined();
      expect(await opened.store.connections.list('a1\u0000')).toEqual([]);
      expect(await opened.store.connections.delete('a1', 'drive\u0000')).toBe(false);
      expect(await opened.store.connections.deleteAccount('a1\u0000')).toBe(0);
      await expect(opened.store.connections.put(input('a1\u0000', 'drive'))).rejects.toMatchObject({ code: 'invalid_input' });
      expect((await opened.store.connections.list('a1')).map((c) => c.provider)).toEqual(['drive']);
    });
  });
}
