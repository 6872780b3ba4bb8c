/**
 * The contract for values with U+0000 (review 40, finding 7): PostgreSQL `text` cannot hold a
 * NUL, so without `storage/no-nul.ts` these calls were driver errors there (a 500 upstream) and
 * "not found" elsewhere. Every store answers alike: lookups find nothing, deleting or consuming
 * nothing is a no-op, a NUL in a new account's name is `invalid_input`, kv keys work.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/storage/index.js';
import type { Opened } from '../contract.js';

export function nulContract(opened: Opened): void {
  let store: Store;
  beforeEach(() => {
    ({ store } = opened);
  });

  describe('values with U+0000', () => {
    it('model lookups find nothing; destroy, consume and revoke are no-ops', async () => {
      const a = store.adapter('AccessToken');
      await a.upsert('at1', { jti: 'at1', kind: 'AccessToken', grantId: 'g1' }, 60);
      expect(await a.find('at1\u0000')).toBeUndefined();
      expect(await store.adapter('Client').find('a\u0000b')).toBeUndefined();
      expect(await store.adapter('Session').findByUid('a\u0000b')).toBeUndefined();
      await a.destroy('at1\u0000');
      await a.consume('at1\u0000');
      await a.revokeByGrantId('g1\u0000');
      expect(await a.find('at1')).toMatchObject({ jti: 'at1' });
    });

    it('account lookups find nothing; a name with a NUL is invalid_input', async () => {
      expect(await store.accounts.findByUsername('alice\u0000')).toBeUndefined();
      expect(await store.accounts.findById('a\u0000')).toBeUndefined();
      expect(await store.accounts.findByUpstreamIdentity('https://idp.example', 'sub\u0000')).toBeUndefined();
      await expect(
        store.accounts.create({ id: 'a1', username: 'alice\u0000', passwordHash: 'scrypt$x', disabled: false }),
      ).rejects.toMatchObject({ name: 'StorageError', code: 'invalid_input' });
    });

    it('kv keys with a NUL count and read back like any other', async () => {
      expect(await store.kv.increment('nul', 'addr|alice\u0000', 1, 60)).toBe(1);
      expect(await store.kv.increment('nul', 'addr|alice\u0000', 1, 60)).toBe(2);
      await store.kv.set('nul', 'jti\u0000', { seen: true }, 60);
      expect(await store.kv.get('nul', 'jti\u0000')).toEqual({ seen: true });
      await store.kv.delete('nul', 'jti\u0000');
      expect(await store.kv.get('nul', 'jti\u0000')).toBeUndefined();
    });
  });
}
